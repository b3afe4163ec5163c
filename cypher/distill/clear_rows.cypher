UNWIND $ids AS id
MATCH (:Chunk {id: id})-[:HAS_ROW]->(r:Row)
DETACH DELETE r
