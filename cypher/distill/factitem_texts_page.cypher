// Fact items in id order after $after, a page at a time (the id constraint's index gives the order): the path
// text their fusion keys come from, and whether they lack them.
MATCH (f:FactItem) WHERE f.id > $after
WITH f ORDER BY f.id LIMIT $limit
RETURN f.id AS id, f.path_text AS text, f.fusion_keys IS NULL AS missing
