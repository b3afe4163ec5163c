// A chunk mentions an entity, under the names it used (kept so that deleting the chunk's document can
// remove the aliases only it contributed: graph/refresh_aliases).
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (e:Entity {id: row.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
SET m.names = row.names
