// Linkable documents whose title ends in a parenthesised disambiguation, after $after in id order, a page at a
// time: an older version keyed them by every title term, the qualifier's included (kg.layers.resource.references).
MATCH (d:Document) WHERE d.id > $after AND d.mention_query IS NOT NULL AND d.title ENDS WITH ')'
RETURN d.id AS id, d.title AS title
ORDER BY d.id
LIMIT $limit
