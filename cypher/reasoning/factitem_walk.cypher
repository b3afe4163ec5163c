// PG-RAG-style walk: fact items nearest to the question, up their route to the topic, down to the chunk.
CALL db.index.vector.queryNodes('factitem_embedding', $fetch, $vector) YIELD node AS f, score
MATCH (f)-[:ITEM_OF]->(c:Chunk)
WITH c, max(2 * score - 1) AS score, collect(f.path_text)[0] AS path
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score, path
ORDER BY score DESC
LIMIT $k
