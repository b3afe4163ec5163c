// (g) PG-RAG: every mind-map row (path down to a fact item) under the given Topic or Route nodes, with the
// item's chunk and the item's raw cosine to the key point (and each path node's: null for a node stored without
// a vector). Rows keep the path from the topic root; a
// subtree spans documents, so its rows pass the same chunk filters as the anchors.
UNWIND $ids AS id
OPTIONAL MATCH (t:Topic {id: id})
OPTIONAL MATCH (r:Route {id: id})
WITH coalesce(t, r) AS top WHERE top IS NOT NULL
MATCH p = (top)-[:HAS_ROUTE*0..]->()-[:HAS_ITEM]->(fi:FactItem)
MATCH up = (:Topic)-[:HAS_ROUTE*0..]->(top)
MATCH (fi)-[:ITEM_OF]->(c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH DISTINCT fi, c, nodes(up) + tail(nodes(p)) AS row
RETURN fi.id AS item_id, c.id AS chunk_id,
       coalesce(2 * vector.similarity.cosine(fi.embedding, $vector) - 1, 0.0) AS item_score,
       [n IN row | {id: n.id, text: coalesce(n.text, ''), path_text: coalesce(n.path_text, n.text, ''),
                    score: 2 * vector.similarity.cosine(n.embedding, $vector) - 1}] AS path
