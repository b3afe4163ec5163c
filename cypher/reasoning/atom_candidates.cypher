// Algorithm 1, line 4: atoms nearest to an atomic question proposal, with the chunk each belongs to
// (the atom-to-chunk hop), keeping cosine >= $threshold and skipping chunks already in the context.
CALL db.index.vector.queryNodes('atom_embedding', $fetch, $vector) YIELD node AS a, score
WITH a, 2 * score - 1 AS cosine
WHERE cosine >= $threshold
MATCH (a)-[:ATOM_OF]->(c:Chunk)
WHERE NOT c.id IN $exclude
RETURN a.id AS atom_id, a.text AS atom_text, cosine AS score,
       c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences
ORDER BY score DESC
LIMIT $k
