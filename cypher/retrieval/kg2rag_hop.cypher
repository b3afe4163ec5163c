// (f) KG2RAG: one hop over the entity graph through reified facts,
// (e)<-[:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(e2), from the frontier $entity_ids. Each fact comes
// with both ends, its chunk and the chunk's raw cosine to the query (the fact's relevance).
// Relevance belongs to a chunk, so it is computed once per distinct chunk and the chunks are ordered (ties by
// id, so the hop is deterministic) before their facts are unwound; only the $max_facts facts kept look up their
// ends. Cosine and both ends for every fact cost 1.8x the time on a 10,000-passage graph (79 vs 43 ms p50).
// An entity with more than $hub_facts facts (a hub: `American`, a generated corpus's `Place`) is not expanded:
// the bound is checked before any of its facts is read. $hub_facts null: no bound.
UNWIND $entity_ids AS id
MATCH (e:Entity {id: id})
WHERE $hub_facts IS NULL OR COUNT { (e)<-[:SUBJECT|OBJECT]-() } <= $hub_facts
MATCH (e)<-[:SUBJECT|OBJECT]-(f:Fact)
WITH DISTINCT f
MATCH (f)-[:FACT_OF]->(c:Chunk)
WITH c, collect(f) AS facts
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH c, facts, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS relevance
ORDER BY relevance DESC, c.id
UNWIND facts AS f
WITH f, c, relevance LIMIT $max_facts
MATCH (f)-[:SUBJECT]->(s:Entity), (f)-[:OBJECT]->(o:Entity)
RETURN f.id AS fact_id, coalesce(f.text, f.head + ' ' + f.relation + ' ' + f.tail) AS text,
       s.id AS subject_id, s.name AS subject, o.id AS object_id, o.name AS object, c.id AS chunk_id,
       coalesce(relevance, 0.0) AS relevance
