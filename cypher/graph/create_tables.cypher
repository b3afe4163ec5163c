UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
CREATE (t:Table {id: row.id})
SET t.document_id = row.document_id, t.caption = row.caption, t.page = row.page, t.header = row.header,
    t.n_rows = row.n_rows, t.n_cols = row.n_cols, t.markdown = row.markdown, t.csv = row.csv,
    t.char_start = row.char_start, t.char_end = row.char_end
CREATE (s)-[:HAS_TABLE]->(t)
WITH t, row
MATCH (c:Chunk {id: row.chunk_id})
CREATE (c)-[:REPRESENTS]->(t)
