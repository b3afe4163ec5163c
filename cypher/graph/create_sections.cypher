UNWIND $rows AS row
CREATE (s:Section {id: row.id})
SET s.document_id = row.document_id, s.title = row.title, s.level = row.level, s.order = row.order,
    s.key = row.key, s.page = row.page
WITH s, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(s, 'embedding', row.embedding)
