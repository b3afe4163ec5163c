UNWIND $rows AS row
MATCH (a:Chunk {id: row.a}), (b:Chunk {id: row.b})
CREATE (a)-[:NEXT]->(b)
