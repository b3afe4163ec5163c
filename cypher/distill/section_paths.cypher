// The titles of the sections above each chunk, outermost first (the offline mind map's routes).
UNWIND $ids AS id
MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk {id: id})
MATCH p = (:Document)-[:HAS_SECTION*]->(s)
RETURN c.id AS id, [n IN nodes(p)[1..] WHERE coalesce(n.title, '') <> '' | n.title] AS section_path
