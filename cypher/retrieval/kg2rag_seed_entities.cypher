// (f) KG2RAG: the entities the seed chunks mention.
UNWIND $chunk_ids AS id
MATCH (:Chunk {id: id})-[:MENTIONS]->(e:Entity)
RETURN DISTINCT e.id AS entity_id
