// Tables the chunks represent, with their header and csv.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})-[:REPRESENTS]->(t:Table)
RETURN c.id AS chunk_id, t.id AS table_id, t.document_id AS document_id, t.header AS header, t.csv AS csv
