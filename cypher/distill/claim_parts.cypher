// Every pending, claimable chunk of the document parts $parts ({document_id, part}: the chunks of the document
// whose order // $part_chunks is part; a layer whose unit is a document part claims all of its chunks at once);
// the conditions of claim_candidates.
UNWIND $parts AS part
MATCH (c:Chunk {document_id: part.document_id})
WHERE c.order >= part.part * $part_chunks AND c.order < (part.part + 1) * $part_chunks
  AND NOT $layer IN coalesce(c.distilled, [])
  AND ($retry_failed OR NOT $layer IN coalesce(c.distill_failed, []))
  AND (c.lease_owner IS NULL OR c.lease_until IS NULL OR c.lease_until < timestamp() OR c.lease_owner IN $dead_owners)
RETURN c.id AS id, c.document_id AS document_id, c.order AS order, size(coalesce(c.text, '')) AS chars
ORDER BY c.id
