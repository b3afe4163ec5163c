// KG2RAG-style expansion: chunks that share an entity with the seed chunks, with the linking entity,
// so the context can be organised along the graph.
MATCH (s:Chunk)-[:MENTIONS]->(e:Entity)<-[:MENTIONS]-(c:Chunk)
WHERE s.id IN $seeds AND NOT c.id IN $seeds
WITH c, s, collect(DISTINCT e.name) AS entities
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, s.id AS seed, entities, size(entities) AS score
ORDER BY score DESC
LIMIT $k
