// Template ({label}: Topic or FactItem): the nodes in id order after $after, a page at a time (the id
// constraint's index gives the order): the path text their fusion keys come from, and whether they lack them.
MATCH (x:{label}) WHERE x.id > $after
WITH x ORDER BY x.id LIMIT $limit
RETURN x.id AS id, x.path_text AS text, x.fusion_keys IS NULL AS missing
