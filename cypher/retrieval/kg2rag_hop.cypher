// (f) KG2RAG: one hop over the entity graph through reified facts,
// (e)<-[:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(e2), from the frontier $entity_ids. Each fact comes
// with both ends, its chunk and the chunk's raw cosine to the query (the fact's relevance).
UNWIND $entity_ids AS id
MATCH (:Entity {id: id})<-[:SUBJECT|OBJECT]-(f:Fact)
WITH DISTINCT f
MATCH (f)-[:SUBJECT]->(s:Entity), (f)-[:OBJECT]->(o:Entity), (f)-[:FACT_OF]->(c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH f, s, o, c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS relevance
ORDER BY relevance DESC LIMIT $max_facts
RETURN f.id AS fact_id, coalesce(f.text, f.head + ' ' + f.relation + ' ' + f.tail) AS text,
       s.id AS subject_id, s.name AS subject, o.id AS object_id, o.name AS object, c.id AS chunk_id,
       coalesce(relevance, 0.0) AS relevance
