// (d) Hybrid fusion of chunk vectors (a), atoms (b) and Lucene full text over chunks and atoms (c), in one
// round trip. Each path ranks chunks by its own score (a chunk keeps its best atom); a path whose weight is
// 0 is not run. $fusion = 'rrf': sum of weight / ($rrf_k + rank); 'linear': sum of weight * the path's
// min-max normalised score (1 when the path found one score). kg.retrieval.fusion computes the same.
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
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, fused AS score, sources
ORDER BY score DESC
