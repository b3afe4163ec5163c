// PIKE-RAG Algorithm 1, the atom-to-chunk hop: the top-k atoms (one row per atom, not per chunk) at or
// above $threshold (raw cosine), each with the chunk it points to, skipping chunks already in context.
// Filters: $document_ids, $exclude_ids, $formats and $metadata, as in chunk_vector.cypher.
CALL db.index.vector.queryNodes('atom_embedding', $candidates, $vector) YIELD node AS a
WITH a, 2 * vector.similarity.cosine(a.embedding, $vector) - 1 AS score
WHERE score >= $threshold
MATCH (a)-[:ATOM_OF]->(c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH a, c, score ORDER BY score DESC LIMIT $k
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN a.id AS atom_id, a.text AS atom_text,
       c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score, 'atom' AS path, a.text AS via, a.id AS via_id
ORDER BY score DESC
