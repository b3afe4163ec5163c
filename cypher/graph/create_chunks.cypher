// Chunks, one row each ({id, section_id, props, embedding}), under their section; graph/link_next chains them.
UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
CREATE (c:Chunk {id: row.id})
SET c += row.props
CREATE (s)-[:HAS_CHUNK]->(c)
WITH c, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
