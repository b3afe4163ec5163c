// (c) Full-text (Lucene BM25) over chunk text and title. $query is already escaped for Lucene syntax
// (kg.store.lucene); an empty query never reaches the index.
CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $candidates}) YIELD node AS c, score
WITH c, score
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH c, score ORDER BY score DESC LIMIT $k
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, score, 'fulltext' AS path, null AS via, null AS via_id
ORDER BY score DESC
