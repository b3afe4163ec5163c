// The next $limit chunks after $after (in id order, so a worker's passes are index scans that never revisit
// what it has passed) that $layer has not distilled and no live worker holds: unleased, lease expired, or
// held by an owner in $dead_owners (a worker on this host whose process is gone); a lease without an
// owner is nobody's and is claimable. Chunks whose LLM task
// failed for the layer only when $retry_failed, and never those in $exclude (failed earlier in this run). Read inside the claim's write transaction; claim_chunks
// re-checks each candidate once it holds the chunk's lock. `chars`: the text a batch will hold of it.
MATCH (c:Chunk)
WHERE c.id > $after
  AND ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT $layer IN coalesce(c.distilled, [])
  AND ($retry_failed OR NOT $layer IN coalesce(c.distill_failed, []))
  AND NOT c.id IN $exclude
  AND (c.lease_owner IS NULL OR c.lease_until IS NULL OR c.lease_until < timestamp() OR c.lease_owner IN $dead_owners)
RETURN c.id AS id, c.document_id AS document_id, c.order AS order, size(coalesce(c.text, '')) AS chars
ORDER BY c.id
LIMIT $limit
