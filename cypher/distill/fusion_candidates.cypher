// Template ({label}, {index}): nodes of other documents whose vectors are within the fusion threshold.
// A document's own nodes are the nearest to each other, so a search that must see past all of them asks for $k
// more than that document holds (at most $max_k): that is `full`. A large document's nodes would each pay a
// search of $max_k, so the search first asks for at most $first ($first null: `full` at once); only when every
// node it returned is within the threshold (`saturated`) can more lie beyond, and the caller searches that
// node again with `full`. Candidates are scored by the exact cosine of the stored vectors (the quantized index's
// own score is approximate: docs/schema.md); the threshold is a cosine.
UNWIND $ids AS id
MATCH (x:{label} {id: id})
WITH x.document_id AS doc, collect(x) AS xs
WITH xs, COUNT { MATCH (y:{label} {document_id: doc}) } AS own
UNWIND xs AS x
WITH x, CASE WHEN $k + own < $max_k THEN $k + own ELSE $max_k END AS full
WITH x, full, CASE WHEN $first IS NOT NULL AND $first < full THEN $first ELSE full END AS asked
CALL db.index.vector.queryNodes('{index}', asked, x.embedding) YIELD node
WITH x, full, asked, node, 2 * vector.similarity.cosine(node.embedding, x.embedding) - 1 AS score
WHERE score >= $threshold
WITH x, full, asked, collect(node) AS near
RETURN x.id AS id, [n IN near WHERE n.document_id <> x.document_id | n.id] AS similar,
       size(near) >= asked AND asked < full AS saturated
