// (d) Hybrid fusion of chunk vectors (a), atoms (b) and Lucene full text over chunks and atoms (c), in one
// round trip. Each path ranks chunks by its own score (a chunk keeps its best atom); a path whose weight is
// 0 is not run. The paths run as concurrent inner transactions (Neo4j Community runs one query on one thread:
// one after the other, the two Lucene paths were most of a query at a million passages, docs/scaling.md), so
// this query needs an implicit (auto-commit) transaction, which GraphStore.read is; they return chunk ids, the
// chunks are read again in the outer one. The Lucene paths go first, the longest work starting earliest. $fusion (the formulas of kg.retrieval.fusion, which computes the same in Python):
//   'zscore' (calibrated): sum of weight * (score - the path's lowest) / the path's standard deviation over
//            its top $candidates: a chunk counts by how many deviations it stands above its path's list,
//            so a hit standing out of its list (a confident match) outweighs a path's evenly spread ones;
//            a path that returned fewer than $candidates counts the others as scoring 0 (no match);
//   'linear': sum of weight * the path's min-max normalised score;
//   'rrf':    sum of weight / ($rrf_k + rank).
// A path that found one score (or only equal ones) contributes its weight.
// The top $link_seeds results also bring their title links in the same round trip (0: none): documents
// keyed (Document.mention_key, a range index seek per term) by one of the chunk's stored name terms, each
// with its best chunk by raw cosine to the query; kg.retrieval.links keeps those whose mention name (the title,
// or the name an untitled passage opens with, or one of that name's short forms: the first the text holds is the
// link's via) the chunk names verbatim (the CONTAINS test here is a necessary condition of that check: the name
// up to its first parenthesis). A seek, not the title full-text index: a
// title word most titles share (`Place` in every `bench query` title, `River` in an encyclopaedia) made each
// full-text lookup score every title, four lookups per query. A seed loaded before chunks stored name_terms
// gets null links, for the caller to look up. With $question_links, the first row also brings the question's
// own title links (its lookup terms $question_keys) as question_links: title_links.cypher's lookup, without a
// second round trip. With $named_by > 0, each of the top $link_seeds also brings the passages that name it
// (incoming REFERENCES, at most $link_candidates a seed, each by its mentioning chunk nearest the query):
// its $named_by nearest, as named_by.
UNWIND [path IN ['fulltext', 'fulltext_atom', 'chunk', 'atom']
        WHERE $weights[path] > 0 AND ($query <> '' OR NOT path STARTS WITH 'fulltext')] AS run
CALL (run) {
  WITH run WHERE run = 'chunk'
  CALL db.index.vector.queryNodes('chunk_embedding', $candidates, $vector) YIELD node AS c
  WITH c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS score WHERE score >= $threshold
  RETURN 'chunk' AS path, c.id AS chunk_id, score, null AS via, null AS via_id
  UNION ALL
  WITH run WHERE run = 'atom'
  CALL db.index.vector.queryNodes('atom_embedding', $candidates, $vector) YIELD node AS a
  WITH a, 2 * vector.similarity.cosine(a.embedding, $vector) - 1 AS score WHERE score >= $atom_threshold
  MATCH (a)-[:ATOM_OF]->(c:Chunk)
  RETURN 'atom' AS path, c.id AS chunk_id, score, a.text AS via, a.id AS via_id
  UNION ALL
  WITH run WHERE run = 'fulltext'
  CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $candidates}) YIELD node AS c, score
  RETURN 'fulltext' AS path, c.id AS chunk_id, score, null AS via, null AS via_id
  UNION ALL
  WITH run WHERE run = 'fulltext_atom'
  CALL db.index.fulltext.queryNodes('atom_text', $query, {limit: $candidates}) YIELD node AS a, score
  MATCH (a)-[:ATOM_OF]->(c:Chunk)
  RETURN 'fulltext_atom' AS path, c.id AS chunk_id, score, a.text AS via, a.id AS via_id
} IN 4 CONCURRENT TRANSACTIONS OF 1 ROW
MATCH (c:Chunk {id: chunk_id})
WITH path, c, score, via, via_id
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH path, c, score, via, via_id ORDER BY score DESC, via_id
WITH path, c, collect({score: score, via: via, via_id: via_id})[0] AS best
WITH path, c, best ORDER BY best.score DESC, c.id
WITH path, collect({c: c, best: best})[..$candidates] AS ranked
// zscore's statistics count the results a path did not return as 0 (no match) up to $candidates: a lone
// Lucene match then stands out of its list as far as it should.
WITH path, ranked, ranked[0].best.score AS top, ranked[-1].best.score AS bottom,
     CASE WHEN size(ranked) < $candidates THEN $candidates - size(ranked) ELSE 0 END AS unmatched
WITH path, ranked, top, unmatched, CASE WHEN unmatched > 0 AND bottom > 0.0 THEN 0.0 ELSE bottom END AS floor,
     reduce(s = 0.0, r IN ranked | s + r.best.score) / (size(ranked) + unmatched) AS mean
WITH path, ranked, top, floor, ranked[-1].best.score AS bottom,
     sqrt((reduce(s = 0.0, r IN ranked | s + (r.best.score - mean) ^ 2) + unmatched * mean ^ 2)
          / (size(ranked) + unmatched)) AS deviation
UNWIND range(0, size(ranked) - 1) AS i
WITH path, ranked[i].c AS c, ranked[i].best AS best, i + 1 AS rank, top, bottom, floor, deviation
WITH c, path, best, rank,
     CASE
       WHEN $fusion = 'rrf' THEN $weights[path] / ($rrf_k + rank)
       WHEN $fusion = 'zscore' AND deviation > 0.0 THEN $weights[path] * (best.score - floor) / deviation
       WHEN top = bottom THEN $weights[path]
       ELSE $weights[path] * (best.score - bottom) / (top - bottom)
     END AS part
WITH c, sum(part) AS fused,
     collect({path: path, score: best.score, rank: rank, via: best.via, via_id: best.via_id}) AS sources
ORDER BY fused DESC LIMIT $k
WITH collect({c: c, fused: fused, sources: sources}) AS ranked
// The linking texts: the question itself (n = -1, when $question_links, with its lookup terms
// $question_keys) and the top $link_seeds chunks (n = their position; the chunk's mention_terms, else its
// name_terms, as the load's linking looks them up).
WITH ranked, CASE WHEN $question_links AND size($question_keys) > 0
                  THEN [{n: -1, text: $text, keys: $question_keys, own: null}] ELSE [] END
             + [i IN range(0, size(ranked) - 1) WHERE i < $link_seeds AND ranked[i].c.name_terms <> ''
                | {n: i, text: ranked[i].c.text, own: ranked[i].c.document_id,
                   keys: coalesce(ranked[i].c.mention_terms, split(ranked[i].c.name_terms, ' '))}]
             AS linking
CALL (linking) {
  UNWIND linking AS x
  UNWIND x.keys AS term
  CALL (term) {
    MATCH (d:Document {mention_key: term})
    RETURN d LIMIT $link_candidates
  }
  WITH DISTINCT x, d WHERE (x.own IS NULL OR d.id <> x.own) AND ($document_ids IS NULL OR d.id IN $document_ids)
    AND ($formats IS NULL OR d.format IN $formats)
    AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata))
  WITH x, d, [name IN coalesce(d.mention_names, [coalesce(d.mention_name, d.title)])
              WHERE x.text CONTAINS trim(split(name, '(')[0])][0] AS via
  WHERE via IS NOT NULL
  MATCH (l:Chunk {document_id: d.id}) WHERE NOT l.id IN $exclude_ids
  WITH x, d, via, l, 2 * vector.similarity.cosine(l.embedding, $vector) - 1 AS sim ORDER BY sim DESC
  WITH x, d, via, collect({c: l, sim: sim})[0] AS best
  WITH x, d, via, best.c AS l, best.sim AS sim
  RETURN collect({n: x.n, chunk_id: l.id, text: l.text, document_id: l.document_id, title: l.title,
                  source: d.source, page: l.page, char_start: l.char_start, char_end: l.char_end,
                  sentences: coalesce(l.sentences, []), score: coalesce(sim, 0.0), path: 'title',
                  via: via, via_id: d.id}) AS found
}
CALL (ranked) {
  UNWIND range(0, size(ranked) - 1) AS n
  WITH n, ranked[n].c AS s WHERE n < $link_seeds AND $named_by > 0
  CALL (s) {
    MATCH (:Document {id: s.document_id})<-[r:REFERENCES]-(o:Document)
    WHERE o.id <> s.document_id AND ($document_ids IS NULL OR o.id IN $document_ids)
      AND ($formats IS NULL OR o.format IN $formats)
      AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN o.metadata))
    RETURN o, r LIMIT $link_candidates
  }
  UNWIND coalesce(r.mention_chunks, []) AS mentioning
  MATCH (l:Chunk {id: mentioning}) WHERE NOT l.id IN $exclude_ids
  WITH n, s, o, l, 2 * vector.similarity.cosine(l.embedding, $vector) - 1 AS sim ORDER BY sim DESC
  WITH n, s, o, collect({c: l, sim: sim})[0] AS best ORDER BY best.sim DESC
  WITH n, s, collect({o: o, c: best.c, sim: best.sim})[..$named_by] AS nearest
  UNWIND nearest AS x
  WITH n, s, x.o AS o, x.c AS l, x.sim AS sim
  RETURN collect({n: n, chunk_id: l.id, text: l.text, document_id: l.document_id, title: l.title,
                  source: o.source, page: l.page, char_start: l.char_start, char_end: l.char_end,
                  sentences: coalesce(l.sentences, []), score: coalesce(sim, 0.0), path: 'named_by',
                  via: s.title, via_id: s.id}) AS naming
}
UNWIND range(0, size(ranked) - 1) AS position
WITH ranked[position].c AS c, ranked[position].fused AS fused, ranked[position].sources AS sources, position,
     found, naming
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, fused AS score, sources,
       CASE WHEN position < $link_seeds AND c.name_terms IS NULL THEN null
            ELSE [l IN found WHERE l.n = position] END AS links,
       CASE WHEN position = 0 AND $question_links THEN [l IN found WHERE l.n = -1] END AS question_links,
       [l IN naming WHERE l.n = position] AS named_by
ORDER BY score DESC
