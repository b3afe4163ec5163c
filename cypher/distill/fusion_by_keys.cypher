// Template ({label}, {index}: Topic and topic_fusion_keys, or FactItem and factitem_fusion_keys): nodes of other
// documents near each pending node in $rows ({id, query}): found by the node's MinHash band keys (row.query: an
// OR of them, with NOT the node's own document id, on the keyword-analysed index; the best $limit by Lucene's
// score, which rare shared keys raise), then kept when the exact cosine of the stored vectors reaches $threshold.
// A term lookup per key: its cost does not grow with the number of nodes, as an HNSW search did (with the
// index's size and segments: docs/scaling.md).
UNWIND $rows AS row
MATCH (x:{label} {id: row.id})
CALL db.index.fulltext.queryNodes('{index}', row.query, {limit: $limit}) YIELD node
WITH x, node WHERE node.embedding IS NOT NULL AND node.document_id <> x.document_id
  AND 2 * vector.similarity.cosine(node.embedding, x.embedding) - 1 >= $threshold
RETURN x.id AS id, collect(node.id) AS similar
