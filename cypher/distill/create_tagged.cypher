UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (t:Tag {id: row.tag_id})
MERGE (c)-[:TAGGED]->(t)
