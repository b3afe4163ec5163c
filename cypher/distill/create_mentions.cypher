// A chunk mentions an entity, under the names it used (kept so that deleting the chunk's document can
// remove the aliases only it contributed: graph/refresh_aliases). CREATE, not MERGE: the same transaction
// cleared the chunk's mentions first (distill/clear_facts) and a batch has one row per chunk and entity, and a
// MERGE would check every mention the chunk already has in this batch (a dense chunk has dozens).
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (e:Entity {id: row.entity_id})
CREATE (c)-[m:MENTIONS]->(e)
SET m.names = row.names
