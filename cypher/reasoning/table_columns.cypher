// Tables whose rows are in the graph, with their header and the chunk that represents the table.
MATCH (t:Table)<-[:ROW_OF]-(:Row)
WITH DISTINCT t
OPTIONAL MATCH (c:Chunk)-[:REPRESENTS]->(t)
WITH t, head(collect(c)) AS c
RETURN t.id AS table_id, t.header AS header, t.document_id AS document_id,
       c.id AS chunk_id, c.text AS text, c.title AS title, c.page AS page,
       c.char_start AS char_start, c.char_end AS char_end, [] AS sentences, 1.0 AS score
LIMIT $limit
