// Forget that the layers ran on these documents' chunks (all chunks when $document_ids is null): --force.
MATCH (c:Chunk)
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids) AND c.distilled IS NOT NULL
SET c.distilled = [x IN c.distilled WHERE NOT x IN $layers]
