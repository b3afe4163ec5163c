// Title-linked expansion for bridge questions: documents whose title the Lucene title index matches in
// $query (terms of the question and of the seed chunks); kg.retrieval.strata then keeps only titles that
// occur verbatim in those texts. Each document's best chunk by raw cosine to the query comes back.
CALL db.index.fulltext.queryNodes('document_title', $query, {limit: $candidates}) YIELD node AS d, score
WHERE ($document_ids IS NULL OR d.id IN $document_ids)
MATCH (c:Chunk {document_id: d.id})
WHERE NOT c.id IN $exclude_ids
WITH d, c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS sim ORDER BY sim DESC
WITH d, collect({c: c, sim: sim})[0] AS best
WITH d, best.c AS c, best.sim AS score
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, coalesce(score, 0.0) AS score, 'title' AS path,
       d.title AS via, d.id AS via_id
