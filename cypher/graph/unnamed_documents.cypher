// Documents written before documents were named (no mention_name: kg.layers.resource.references), after $after
// in id order, a page at a time, each with its title and the opening of its first chunk.
MATCH (d:Document) WHERE d.id > $after AND d.mention_name IS NULL
WITH d ORDER BY d.id LIMIT $limit
CALL (d) {
  OPTIONAL MATCH (c:Chunk {document_id: d.id})
  RETURN c.text AS text ORDER BY c.order LIMIT 1
}
RETURN d.id AS id, d.title AS title, left(coalesce(text, ''), 400) AS opening
ORDER BY id
