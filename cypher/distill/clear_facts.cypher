// A chunk's facts and mentions, before they are written again (entities stay: others may share them).
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
CALL (c) { MATCH (c)<-[:FACT_OF]-(f:Fact) DETACH DELETE f }
CALL (c) { MATCH (c)-[m:MENTIONS]->(:Entity) DELETE m }
