// A document by id or by source path.
MATCH (d:Document)
WHERE d.id = $key OR d.source = $key
RETURN d.id AS id, d.source AS source, d.title AS title
