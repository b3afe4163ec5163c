// Tables whose rows are Row nodes: header, caption, the section and document they sit in, the chunk that
// represents the table, and every row's cells in row order (tables are small; $rows caps them).
MATCH (t:Table)<-[:ROW_OF]-(r:Row)
WITH t, r ORDER BY r.index
WITH t, collect(r.cells)[..$rows] AS cells
OPTIONAL MATCH (c:Chunk)-[:REPRESENTS]->(t)
OPTIONAL MATCH (s:Section)-[:HAS_TABLE]->(t)
OPTIONAL MATCH (d:Document {id: t.document_id})
WITH t, cells, head(collect(c)) AS c, head(collect(s.title)) AS section, head(collect(d.title)) AS document
RETURN t.id AS table_id, t.header AS header, coalesce(t.caption, '') AS caption,
       coalesce(section, '') AS section, coalesce(document, '') AS document, cells,
       c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, c.page AS page,
       c.char_start AS char_start, c.char_end AS char_end
LIMIT $limit
