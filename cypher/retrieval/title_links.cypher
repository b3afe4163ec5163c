// Title-linked expansion for bridge questions, for several linking texts in one round trip: for each list of
// lookup terms in $keys (of the question, or of a seed chunk), the documents keyed by one of them
// (Document.mention_key, a range index seek per term: hybrid.cypher says why not the title full-text index), if
// the text contains one of the document's mention names (its title, or the name an untitled passage opens with
// and its short forms: kg.layers.resource.references) up to its first parenthesis (a necessary condition of the
// check that follows), the first such name its via; kg.retrieval.links then keeps only names that occur verbatim
// in that text. Each document comes back with its best chunk by raw cosine to the query $vector, tagged with
// the text's position n.
UNWIND range(0, size($keys) - 1) AS n
UNWIND $keys[n] AS term
CALL (term) {
  MATCH (d:Document {mention_key: term})
  RETURN d LIMIT $candidates
}
WITH DISTINCT n, d WHERE ($document_ids IS NULL OR d.id IN $document_ids)
  AND ($formats IS NULL OR d.format IN $formats)
  AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata))
WITH n, d, [name IN coalesce(d.mention_names, [coalesce(d.mention_name, d.title)])
            WHERE $texts[n] CONTAINS trim(split(name, '(')[0])][0] AS via
WHERE via IS NOT NULL
MATCH (c:Chunk {document_id: d.id})
WHERE NOT c.id IN $exclude_ids
WITH n, d, via, c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS sim ORDER BY sim DESC
WITH n, d, via, collect({c: c, sim: sim})[0] AS best
WITH n, d, via, best.c AS c, best.sim AS score
RETURN n, c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, coalesce(score, 0.0) AS score, 'title' AS path,
       via, d.id AS via_id
