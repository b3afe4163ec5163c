// Linkable documents written before titles were keyed (no mention_key), a page at a time; a document is keyed
// ('' when no term can key it) as soon as it is read, so the next page is the next one.
MATCH (d:Document) WHERE d.mention_query IS NOT NULL AND d.mention_key IS NULL
RETURN d.id AS id, d.title AS title
LIMIT $limit
