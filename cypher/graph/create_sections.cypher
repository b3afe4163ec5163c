// Sections arrive parents first; the root section hangs off its document.
UNWIND $rows AS row
MATCH (parent) WHERE (parent:Document OR parent:Section) AND parent.id = row.parent_id
CREATE (s:Section {id: row.id})
SET s.document_id = row.document_id, s.title = row.title, s.level = row.level, s.order = row.order,
    s.key = row.key, s.page = row.page
CREATE (parent)-[:HAS_SECTION]->(s)
WITH s, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(s, 'embedding', row.embedding)
