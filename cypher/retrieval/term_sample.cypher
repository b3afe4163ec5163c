// A sample of the chunks' texts, from which kg.retrieval.common_terms estimates the share of chunks holding
// each term: up to $per_start chunks in id order from each of $starts. A chunk id starts with its document's
// id, a hash, so points drawn evenly from that space give documents at random; each start is a range seek of
// the id constraint's index, whatever the store's size. Windows may overlap: the caller counts a chunk once.
UNWIND $starts AS start
CALL (start) {
  MATCH (c:Chunk) WHERE c.id >= start
  RETURN c ORDER BY c.id LIMIT $per_start
}
RETURN c.id AS id, c.text AS text, coalesce(c.title, '') AS title
