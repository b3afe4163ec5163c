// Nearest entities of each new mention's name vector, above the merge threshold. The index scores cosine
// as (1 + cos) / 2; 2 * score - 1 turns it back into the cosine the threshold (and the in-batch
// clustering in kg.layers.distilled.resolve) is expressed in.
UNWIND $rows AS row
CALL db.index.vector.queryNodes('entity_embedding', $k, row.embedding) YIELD node, score
WITH row, node, 2 * score - 1 AS score WHERE score >= $threshold
RETURN row.i AS i, node.id AS id, node.name AS name, node.type AS type, node.aliases AS aliases, score
