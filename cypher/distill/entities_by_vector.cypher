// Nearest entities of each new mention's name vector, above the merge threshold. The index finds the
// candidates; each is scored by the exact cosine of the stored vectors (the quantized index's own score is
// approximate: docs/schema.md), the cosine the threshold and the in-batch clustering in
// kg.layers.distilled.resolve are expressed in.
UNWIND $rows AS row
CALL db.index.vector.queryNodes('entity_embedding', $k, row.embedding) YIELD node
WITH row, node, 2 * vector.similarity.cosine(node.embedding, row.embedding) - 1 AS score WHERE score >= $threshold
RETURN row.i AS i, node.id AS id, node.name AS name, node.type AS type, node.aliases AS aliases, score
