// How many chunks of the given documents (all when $document_ids is null) $layer has still to distil:
// the total a run's progress and ETA are measured against.
MATCH (c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT $layer IN coalesce(c.distilled, [])
  AND ($retry_failed OR NOT $layer IN coalesce(c.distill_failed, []))
RETURN count(c) AS pending
