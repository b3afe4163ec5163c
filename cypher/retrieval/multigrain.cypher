// (e) Multi-granularity score propagation (PIKE-RAG 5.2.3, Figure 8). Candidate chunks come from every
// layer: chunk vectors, atoms and facts (distilled layer, propagated up to their chunk), sections and
// documents (propagated down to their chunks). Each candidate gets g(chunk), g(section), g(document)
// (centroid or summary vectors; a missing one falls back to g(chunk)) and g(up) = its best atom or fact.
// f(*) = w.chunk*g(c) + w.section*g(s) + w.document*g(d) + w.up*max(0, g(up) - g(c)): context from above
// shifts a chunk, and a finer unit that matches better than the whole chunk lifts it. Raw cosines.
CALL () {
  CALL db.index.vector.queryNodes('chunk_embedding', $candidates, $vector) YIELD node AS c
  RETURN c, null AS up, null AS via, null AS via_id
  UNION ALL
  CALL db.index.vector.queryNodes('atom_embedding', $candidates, $vector) YIELD node AS a
  MATCH (a)-[:ATOM_OF]->(c:Chunk)
  RETURN c, 2 * vector.similarity.cosine(a.embedding, $vector) - 1 AS up, a.text AS via, a.id AS via_id
  UNION ALL
  CALL db.index.vector.queryNodes('fact_embedding', $candidates, $vector) YIELD node AS f
  MATCH (f)-[:FACT_OF]->(c:Chunk)
  RETURN c, 2 * vector.similarity.cosine(f.embedding, $vector) - 1 AS up, f.text AS via, f.id AS via_id
  UNION ALL
  CALL db.index.vector.queryNodes('section_embedding', $coarse, $vector) YIELD node AS s
  MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
  RETURN c, null AS up, null AS via, null AS via_id
  UNION ALL
  CALL db.index.vector.queryNodes('document_embedding', $coarse, $vector) YIELD node AS d
  MATCH (c:Chunk {document_id: d.id})
  RETURN c, null AS up, null AS via, null AS via_id
}
WITH c, up, via, via_id
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH c, coalesce(up, -2.0) AS up, via, via_id ORDER BY up DESC
WITH c, collect({up: up, via: via, via_id: via_id})[0] AS best
OPTIONAL MATCH (s:Section)-[:HAS_CHUNK]->(c)
OPTIONAL MATCH (d:Document {id: c.document_id})
WITH c, best, d, s, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS g_c
WITH c, best, d, g_c,
     CASE WHEN s.embedding IS NULL THEN g_c ELSE 2 * vector.similarity.cosine(s.embedding, $vector) - 1 END AS g_s,
     CASE WHEN d.embedding IS NULL THEN g_c ELSE 2 * vector.similarity.cosine(d.embedding, $vector) - 1 END AS g_d
WITH c, best, d, g_c, g_s, g_d,
     $weights.chunk * g_c + $weights.section * g_s + $weights.document * g_d
       + $weights.up * CASE WHEN best.up > g_c THEN best.up - g_c ELSE 0.0 END AS score
WHERE g_c IS NOT NULL
ORDER BY score DESC LIMIT $k
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score,
       [{path: 'chunk', score: g_c}, {path: 'section', score: g_s}, {path: 'document', score: g_d}]
       + CASE WHEN best.up > -2.0 THEN [{path: 'up', score: best.up, via: best.via, via_id: best.via_id}]
              ELSE [] END AS sources
ORDER BY score DESC
