// Entities stored under one of each new mention's block keys (kg.layers.distilled.text.name_blocks: the
// same words, or one word more or fewer), with the exact cosine of their stored vector to the mention's,
// above the merge threshold. Each key is a whole term of the keyword-analysed entity_blocks index, so the
// lookup seeks terms: its cost does not grow with the number of entities (an HNSW search over
// entity_embedding did, with the index's segments: docs/scaling.md).
UNWIND $rows AS row
CALL db.index.fulltext.queryNodes('entity_blocks', row.query, {limit: $limit}) YIELD node
WITH row, node WHERE node.embedding IS NOT NULL
WITH row, node, 2 * vector.similarity.cosine(node.embedding, row.embedding) - 1 AS score WHERE score >= $threshold
RETURN row.i AS i, node.id AS id, node.name AS name, node.type AS type, node.aliases AS aliases, score
