UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
CREATE (c:Chunk {id: row.id})
SET c.document_id = row.document_id, c.text = row.text, c.order = row.order, c.kind = row.kind,
    c.page = row.page, c.char_start = row.char_start, c.char_end = row.char_end, c.tokens = row.tokens,
    c.summary = row.summary, c.title = row.title, c.sentences = row.sentences
CREATE (s)-[:HAS_CHUNK]->(c)
WITH c, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
