// (g) PG-RAG: anchor fact items for one key point (FactItem vector index, raw cosine >= $threshold), each
// with its mind-map path from the topic down: (Topic)-[:HAS_ROUTE]->(Route)...-[:HAS_ITEM]->(FactItem).
CALL db.index.vector.queryNodes('factitem_embedding', $candidates, $vector) YIELD node AS fi, score
WITH fi, 2 * score - 1 AS score WHERE score >= $threshold
MATCH p = (:Topic)-[:HAS_ROUTE*0..]->()-[:HAS_ITEM]->(fi)
WHERE $document_ids IS NULL OR fi.document_id IN $document_ids
RETURN fi.id AS anchor_id, score,
       [n IN nodes(p) | {id: n.id, text: coalesce(n.text, ''), path_text: coalesce(n.path_text, n.text, '')}] AS path
ORDER BY score DESC LIMIT $k
