// Chunks of the given documents (all when $document_ids is null) that a layer has not distilled yet;
// chunks whose LLM task failed for it only when $retry_failed.
MATCH (c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT $layer IN coalesce(c.distilled, [])
  AND ($retry_failed OR NOT $layer IN coalesce(c.distill_failed, []))
RETURN c.id AS id, c.document_id AS document_id, c.text AS text, coalesce(c.title, '') AS title,
       c.order AS order, coalesce(c.summary, '') AS summary
ORDER BY c.document_id, c.order
