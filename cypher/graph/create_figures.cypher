UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
CREATE (f:Figure {id: row.id})
SET f.document_id = row.document_id, f.caption = row.caption, f.page = row.page,
    f.char_start = row.char_start, f.char_end = row.char_end
CREATE (s)-[:HAS_FIGURE]->(f)
WITH f, row
MATCH (c:Chunk {id: row.chunk_id})
CREATE (c)-[:REPRESENTS]->(f)
