// Nearest entities of each new mention's name vector, above the merge threshold.
UNWIND $rows AS row
CALL db.index.vector.queryNodes('entity_embedding', $k, row.embedding) YIELD node, score
WITH row, node, score WHERE score >= $threshold
RETURN row.i AS i, node.id AS id, node.name AS name, node.type AS type, node.aliases AS aliases, score
