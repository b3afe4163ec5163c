// Every pending, claimable chunk of the documents $documents (a layer whose unit is the document claims all
// of a document's chunks at once); the conditions of claim_candidates.
UNWIND $documents AS document
MATCH (c:Chunk {document_id: document})
WHERE NOT $layer IN coalesce(c.distilled, [])
  AND ($retry_failed OR NOT $layer IN coalesce(c.distill_failed, []))
  AND (c.lease_until IS NULL OR c.lease_until < timestamp() OR c.lease_owner IN $dead_owners)
RETURN c.id AS id, c.document_id AS document_id
ORDER BY c.id
