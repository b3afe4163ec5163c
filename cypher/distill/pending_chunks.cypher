// Chunks of the given documents (all when $document_ids is null) that a layer has not distilled yet, with
// the titles of the sections above them, outermost first (the offline mind map's routes).
MATCH (c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT $layer IN coalesce(c.distilled, [])
OPTIONAL MATCH p = (:Document {id: c.document_id})-[:HAS_SECTION*]->(:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS id, c.document_id AS document_id, c.text AS text, coalesce(c.title, '') AS title,
       c.order AS order,
       CASE WHEN p IS NULL THEN [] ELSE [n IN nodes(p)[1..-1] WHERE coalesce(n.title, '') <> '' | n.title] END
         AS section_path
ORDER BY c.document_id, c.order
