// The owners of live leases on chunks $layer has not distilled: the workers a worker that found nothing
// left to claim checks for liveness (a dead one's chunks are claimed at once, not after the lease expires).
// A lease without an owner (a read that overlaps the commit ending it, a chunk edited by hand) names nobody.
MATCH (c:Chunk)
WHERE c.lease_until >= timestamp() AND c.lease_owner IS NOT NULL AND NOT $layer IN coalesce(c.distilled, [])
  AND ($document_ids IS NULL OR c.document_id IN $document_ids)
RETURN DISTINCT c.lease_owner AS owner
