// (b) Atom vector -> [:ATOM_OF] -> chunk (PIKE-RAG Figure 11, path b). Atoms at or above $threshold
// (raw cosine) lead to their chunk; each chunk keeps its best atom, which explains the hit.
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
WITH c, a, score ORDER BY score DESC
WITH c, collect({id: a.id, text: a.text, score: score})[0] AS best
WITH c, best ORDER BY best.score DESC LIMIT $k
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, best.score AS score, 'atom' AS path,
       best.text AS via, best.id AS via_id
ORDER BY score DESC
