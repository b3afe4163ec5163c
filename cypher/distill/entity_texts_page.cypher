// Entities in id order after $after, a page at a time (the id constraint's index gives the order, so a page
// starts where the last ended): the name their block keys come from, and whether they lack them.
MATCH (e:Entity) WHERE e.id > $after
WITH e ORDER BY e.id LIMIT $limit
RETURN e.id AS id, e.name AS text, e.block_keys IS NULL AS missing
