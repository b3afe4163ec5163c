// (c) Full-text (Lucene BM25) over chunk text and title ('fulltext') and over atoms ('fulltext_atom', leading
// to their chunks; each chunk keeps its best atom): each path in $paths gives its top $k chunks of the
// index's best $candidates that pass the filters. $query is already escaped for Lucene syntax
// (kg.store.lucene); an empty query never reaches the index. The paths run as concurrent inner transactions
// (as in hybrid.cypher: one query runs on one thread, and the two Lucene searches one after the other were most
// of the method's time at a million passages), so this needs an implicit transaction, which GraphStore.read is.
UNWIND $paths AS run
CALL (run) {
  WITH run WHERE run = 'fulltext'
  CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $candidates}) YIELD node AS c, score
  RETURN c.id AS chunk_id, score, null AS via, null AS via_id
  UNION ALL
  WITH run WHERE run = 'fulltext_atom'
  CALL db.index.fulltext.queryNodes('atom_text', $query, {limit: $candidates}) YIELD node AS a, score
  MATCH (a)-[:ATOM_OF]->(c:Chunk)
  RETURN c.id AS chunk_id, score, a.text AS via, a.id AS via_id
} IN 2 CONCURRENT TRANSACTIONS OF 1 ROW
MATCH (c:Chunk {id: chunk_id})
WITH run AS path, c, score, via, via_id
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH path, c, score, via, via_id ORDER BY score DESC, via_id
WITH path, c, collect({score: score, via: via, via_id: via_id})[0] AS best
WITH path, c, best ORDER BY best.score DESC, c.id
WITH path, collect({c: c, best: best})[..$k] AS ranked
UNWIND ranked AS r
WITH path, r.c AS c, r.best AS best
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, best.score AS score, path, best.via AS via, best.via_id AS via_id
ORDER BY path, score DESC
