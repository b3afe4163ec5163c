// (f) KG2RAG: the entities the seed chunks mention, with the seed that mentions them.
UNWIND $chunk_ids AS id
MATCH (:Chunk {id: id})-[:MENTIONS]->(e:Entity)
RETURN DISTINCT id AS chunk_id, e.id AS entity_id, e.name AS name
