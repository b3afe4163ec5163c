// Reasoning-local flat retrieval (path (a) of PIKE-RAG Figure 11): the chunks nearest to $vector.
// Neo4j reports cosine as (1 + cos) / 2; the score returned is the cosine itself.
CALL db.index.vector.queryNodes('chunk_embedding', $fetch, $vector) YIELD node AS c, score
WHERE NOT c.id IN $exclude AND ($document_ids IS NULL OR c.document_id IN $document_ids)
WITH c, 2 * score - 1 AS cosine
WHERE cosine >= $threshold
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, cosine AS score
ORDER BY score DESC
LIMIT $k
