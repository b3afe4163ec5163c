// Entity links: entities the Lucene name index matches in $query whose name occurs verbatim in the question
// $question, then the chunks that mention them, each with its raw cosine to the query.
CALL db.index.fulltext.queryNodes('entity_names', $query, {limit: $candidates}) YIELD node AS e
WITH e WHERE $question CONTAINS e.name
MATCH (c:Chunk)-[:MENTIONS]->(e)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH e, c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS score
ORDER BY score DESC LIMIT 4 * $candidates
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, coalesce(score, 0.0) AS score, 'entity' AS path,
       e.name AS via, e.id AS via_id
