// ppr without GDS: which of the ranked chunks $ids pass the retrieval filters.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
RETURN c.id AS chunk_id
