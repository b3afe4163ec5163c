// Fact items of other documents near each pending item in $rows ({id, query}): found by the item's MinHash band
// keys (row.query: an OR of them, with NOT the item's own document id, on the keyword-analysed
// factitem_fusion_keys index; the best $limit by Lucene's score, which rare shared keys raise), then kept when
// the exact cosine of the stored vectors reaches $threshold. A term lookup per key: its cost does not grow
// with the number of items, as the HNSW search over factitem_embedding did.
UNWIND $rows AS row
MATCH (x:FactItem {id: row.id})
CALL db.index.fulltext.queryNodes('factitem_fusion_keys', row.query, {limit: $limit}) YIELD node
WITH x, node WHERE node.embedding IS NOT NULL AND node.document_id <> x.document_id
  AND 2 * vector.similarity.cosine(node.embedding, x.embedding) - 1 >= $threshold
RETURN x.id AS id, collect(node.id) AS similar
