// (a) Chunk vector top-k (PIKE-RAG Figure 11, path a). The index finds $candidates; each is scored by the
// exact cosine of the stored vectors (the quantized index's own score is approximate: docs/schema.md), as a
// raw cosine so thresholds read like the papers' (0.5 means cos >= 0.5).
// Filters: $document_ids (null = all), $exclude_ids, $formats and $metadata ("key=value") on the Document.
CALL db.index.vector.queryNodes('chunk_embedding', $candidates, $vector) YIELD node AS c
WITH c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS score
WHERE score >= $threshold
  AND ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH c, score ORDER BY score DESC LIMIT $k
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score, 'chunk' AS path, null AS via, null AS via_id
ORDER BY score DESC
