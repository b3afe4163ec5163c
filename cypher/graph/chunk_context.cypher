// A chunk with its document's source, the titles of the sections above it (outermost first) and the chunks
// up to $window places before and after it in its document's order (the MCP server's get_chunk).
MATCH (c:Chunk {id: $id})
OPTIONAL MATCH (d:Document {id: c.document_id})
CALL (c) {
  OPTIONAL MATCH p = (:Document)-[:HAS_SECTION*]->(:Section)-[:HAS_CHUNK]->(c)
  RETURN CASE WHEN p IS NULL THEN [] ELSE [n IN nodes(p)[1..-1] WHERE coalesce(n.title, '') <> '' | n.title] END
         AS section_path
  LIMIT 1
}
CALL (c) {
  OPTIONAL MATCH (n:Chunk {document_id: c.document_id})
  WHERE n.order >= c.order - $window AND n.order <= c.order + $window AND n.id <> c.id
  WITH n ORDER BY n.order
  RETURN collect(n {chunk_id: n.id, .order, .text, .page, .char_start, .char_end}) AS neighbours
}
RETURN c.id AS chunk_id, c.document_id AS document_id, c.title AS title, d.source AS source, c.page AS page,
       c.char_start AS char_start, c.char_end AS char_end, c.order AS order, c.kind AS kind, c.text AS text,
       section_path, neighbours
