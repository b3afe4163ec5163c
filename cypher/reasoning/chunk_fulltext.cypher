// Lexical retrieval over the chunk full-text index (Lucene scores, not comparable to cosine).
CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $fetch}) YIELD node AS c, score
WHERE NOT c.id IN $exclude AND ($document_ids IS NULL OR c.document_id IN $document_ids)
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score
ORDER BY score DESC
LIMIT $k
