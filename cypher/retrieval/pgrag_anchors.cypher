// (g) PG-RAG: anchor fact items for one key point (FactItem vector index, raw cosine >= $threshold), each
// with its mind-map path from the topic down: (Topic)-[:HAS_ROUTE]->(Route)...-[:HAS_ITEM]->(FactItem), each node
// with its raw cosine to the key point (null for a node stored without a vector).
// Only items whose chunk passes the filters ($document_ids, $exclude_ids, $formats, $metadata) anchor.
CALL db.index.vector.queryNodes('factitem_embedding', $candidates, $vector) YIELD node AS fi
WITH fi, 2 * vector.similarity.cosine(fi.embedding, $vector) - 1 AS score WHERE score >= $threshold
  AND EXISTS {
    MATCH (fi)-[:ITEM_OF]->(c:Chunk)
    WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
      AND NOT c.id IN $exclude_ids
      AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
            MATCH (d:Document {id: c.document_id})
            WHERE ($formats IS NULL OR d.format IN $formats)
              AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) }) }
MATCH p = (:Topic)-[:HAS_ROUTE*0..]->()-[:HAS_ITEM]->(fi)
RETURN fi.id AS anchor_id, score,
       [n IN nodes(p) | {id: n.id, text: coalesce(n.text, ''), path_text: coalesce(n.path_text, n.text, ''),
                    score: 2 * vector.similarity.cosine(n.embedding, $vector) - 1}] AS path
ORDER BY score DESC LIMIT $k
