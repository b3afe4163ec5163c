// Template ({label}, {index}): nodes of other documents whose vectors are within the fusion threshold.
// A document's own nodes are the nearest to each other, so the search asks for $k more than that document
// holds (at most $max_k) before dropping them. Candidates are scored by the exact cosine of the stored
// vectors (the quantized index's own score is approximate: docs/schema.md); the threshold is a cosine.
UNWIND $ids AS id
MATCH (x:{label} {id: id})
WITH x.document_id AS doc, collect(x) AS xs
WITH xs, COUNT { MATCH (y:{label} {document_id: doc}) } AS own
UNWIND xs AS x
CALL db.index.vector.queryNodes('{index}', CASE WHEN $k + own < $max_k THEN $k + own ELSE $max_k END, x.embedding)
  YIELD node
WITH x, node, 2 * vector.similarity.cosine(node.embedding, x.embedding) - 1 AS score
WHERE score >= $threshold AND node.document_id <> x.document_id
RETURN x.id AS id, collect(node.id) AS similar
