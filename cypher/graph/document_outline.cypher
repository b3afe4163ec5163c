// A document's sections in reading order, with their level, first page and chunk ids (in order).
MATCH (s:Section {document_id: $id})
OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
WITH s, c ORDER BY c.order
WITH s, collect(c.id) AS chunk_ids, min(c.page) AS first_page
RETURN s.id AS id, s.key AS key, coalesce(s.title, '') AS title, coalesce(s.level, 0) AS level,
       coalesce(s.page, first_page) AS page, chunk_ids
ORDER BY s.order
