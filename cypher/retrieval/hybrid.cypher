// (d) Hybrid fusion of chunk vectors (a), atoms (b) and Lucene full text over chunks and atoms (c), in one
// round trip. Each path ranks chunks by its own score (a chunk keeps its best atom); a path whose weight is
// 0 is not run. $fusion = 'rrf': sum of weight / ($rrf_k + rank); 'linear': sum of weight * the path's
// min-max normalised score (1 when the path found one score). kg.retrieval.fusion computes the same.
// The top $link_seeds results also bring their title links in the same round trip (0: none): documents
// whose title the chunk's stored name_terms match in the title index, each with its best chunk by raw
// cosine to the query; kg.retrieval.links keeps those whose title the chunk names verbatim (the CONTAINS
// test here is a necessary condition of that check: the title up to its first parenthesis). A seed loaded
// before chunks stored name_terms gets null links, for the caller to look up.
CALL () {
  CALL db.index.vector.queryNodes('chunk_embedding', $candidates, $vector) YIELD node AS c, score
  WITH c, 2 * score - 1 AS score WHERE $weights.chunk > 0 AND score >= $threshold
  RETURN 'chunk' AS path, c, score, null AS via, null AS via_id
  UNION ALL
  WITH 1 AS run WHERE $weights.atom > 0
  CALL db.index.vector.queryNodes('atom_embedding', $candidates, $vector) YIELD node AS a, score
  WITH a, 2 * score - 1 AS score WHERE score >= $atom_threshold
  MATCH (a)-[:ATOM_OF]->(c:Chunk)
  RETURN 'atom' AS path, c, score, a.text AS via, a.id AS via_id
  UNION ALL
  WITH 1 AS run WHERE $weights.fulltext > 0 AND $query <> ''
  CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $candidates}) YIELD node AS c, score
  RETURN 'fulltext' AS path, c, score, null AS via, null AS via_id
  UNION ALL
  WITH 1 AS run WHERE $weights.fulltext_atom > 0 AND $query <> ''
  CALL db.index.fulltext.queryNodes('atom_text', $query, {limit: $candidates}) YIELD node AS a, score
  MATCH (a)-[:ATOM_OF]->(c:Chunk)
  RETURN 'fulltext_atom' AS path, c, score, a.text AS via, a.id AS via_id
}
WITH path, c, score, via, via_id
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH path, c, score, via, via_id ORDER BY score DESC
WITH path, c, collect({score: score, via: via, via_id: via_id})[0] AS best
WITH path, c, best ORDER BY best.score DESC
WITH path, collect({c: c, best: best})[..$candidates] AS ranked
WITH path, ranked, ranked[0].best.score AS top, ranked[-1].best.score AS bottom
UNWIND range(0, size(ranked) - 1) AS i
WITH path, ranked[i].c AS c, ranked[i].best AS best, i + 1 AS rank, top, bottom
WITH c, path, best, rank,
     CASE $fusion
       WHEN 'rrf' THEN $weights[path] / ($rrf_k + rank)
       ELSE $weights[path] * CASE WHEN top > bottom THEN (best.score - bottom) / (top - bottom) ELSE 1.0 END
     END AS part
WITH c, sum(part) AS fused,
     collect({path: path, score: best.score, rank: rank, via: best.via, via_id: best.via_id}) AS sources
ORDER BY fused DESC LIMIT $k
WITH collect({c: c, fused: fused, sources: sources}) AS ranked
UNWIND range(0, size(ranked) - 1) AS position
WITH ranked[position].c AS c, ranked[position].fused AS fused, ranked[position].sources AS sources, position
CALL (c, position) {
  WITH c WHERE position < $link_seeds AND c.name_terms <> ''
  CALL db.index.fulltext.queryNodes('document_title', c.name_terms, {limit: $link_candidates}) YIELD node AS d
  WITH c, d WHERE d.id <> c.document_id AND ($document_ids IS NULL OR d.id IN $document_ids)
    AND ($formats IS NULL OR d.format IN $formats)
    AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata))
    AND c.text CONTAINS trim(split(d.title, '(')[0])
  MATCH (l:Chunk {document_id: d.id}) WHERE NOT l.id IN $exclude_ids
  WITH d, l, 2 * vector.similarity.cosine(l.embedding, $vector) - 1 AS sim ORDER BY sim DESC
  WITH d, collect({c: l, sim: sim})[0] AS best
  WITH d, best.c AS l, best.sim AS sim
  RETURN collect({chunk_id: l.id, text: l.text, document_id: l.document_id, title: l.title, source: d.source,
                  page: l.page, char_start: l.char_start, char_end: l.char_end,
                  sentences: coalesce(l.sentences, []), score: coalesce(sim, 0.0), path: 'title',
                  via: d.title, via_id: d.id}) AS links
}
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, fused AS score, sources,
       CASE WHEN position < $link_seeds AND c.name_terms IS NULL THEN null ELSE links END AS links
ORDER BY score DESC
