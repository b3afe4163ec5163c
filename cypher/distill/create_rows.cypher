// Rows with their cells; typed numeric cells go in through a map (SET +=), so no column name is ever
// written into the query text.
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
CREATE (r:Row {id: row.id})
SET r.document_id = row.document_id, r.chunk_id = row.chunk_id, r.table_id = row.table_id,
    r.index = row.index, r.kind = row.kind, r.cells = row.cells, r.cell_keys = row.cell_keys,
    r.columns = row.columns
SET r += row.props
CREATE (c)-[:HAS_ROW]->(r)
WITH r, row WHERE row.table_id IS NOT NULL
MATCH (t:Table {id: row.table_id})
CREATE (r)-[:ROW_OF]->(t)
