// Entities in id order after $after, a page at a time (the id constraint's index gives the order, so a page
// starts where the last ended), and whether each lacks block keys (written before names had them).
MATCH (e:Entity) WHERE e.id > $after
WITH e ORDER BY e.id LIMIT $limit
RETURN e.id AS id, e.name AS name, e.block_keys IS NULL AS missing
