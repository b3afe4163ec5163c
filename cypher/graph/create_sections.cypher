// Sections, one row each ({id, parent_id, props, embedding}); graph/link_sections hangs them off their parents.
UNWIND $rows AS row
CREATE (s:Section {id: row.id})
SET s += row.props
WITH s, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(s, 'embedding', row.embedding)
