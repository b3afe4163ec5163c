// A later round of multi-round retrieval (kg.retrieval.rounds), every probe of the round in one round trip.
// Each probe is {query, name, words, own}: a Lucene query that requires one bridge name (a name an earlier
// round's passage holds and the question does not) and ranks by the question's terms besides, the name and its
// words, and the document of the passage that suggested it, which the probe does not return. Each probe gives the best $candidates
// chunks passing the filters, with their BM25 score, their raw cosine to the question's $vector and whether
// the passage is about the name (its title holds it, or each of its words is in the text's first $opening
// characters: a lead names its subject first, often more fully, "Norman Rae Taurog" for "Norman Taurog"), tagged with the probe's position n and with how many passages the index matched, up to
// $specific: a name more passages hold than that is no bridge but a common word ("American"), and
// kg.retrieval.rounds drops its probe.
UNWIND range(0, size($probes) - 1) AS n
CALL (n) {
  CALL db.index.fulltext.queryNodes('chunk_text', $probes[n].query, {limit: $specific}) YIELD node AS c, score
  WITH collect({c: c, score: score}) AS found
  UNWIND [f IN found WHERE f.c.document_id <> $probes[n].own][..$candidates] AS f
  RETURN f.c AS c, f.score AS score, size(found) AS matched
}
WITH n, c, score, matched
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN n, c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS sim,
       matched, coalesce(c.title, '') CONTAINS $probes[n].name
                OR all(w IN $probes[n].words WHERE left(c.text, $opening) CONTAINS w) AS about
ORDER BY n, score DESC
