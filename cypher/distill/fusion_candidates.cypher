// Template ({label}, {index}): nodes of other documents whose vectors are within the fusion threshold.
UNWIND $ids AS id
MATCH (x:{label} {id: id})
CALL db.index.vector.queryNodes('{index}', $k, x.embedding) YIELD node, score
WITH x, node, score WHERE score >= $threshold AND node.document_id <> x.document_id
RETURN x.id AS id, collect(node.id) AS similar
