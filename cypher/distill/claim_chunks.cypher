// Lease the candidate chunks $ids to $owner for $lease_ms milliseconds. The first SET takes each chunk's
// write lock; the conditions are read only after it, so they see what a concurrent claimer committed while
// this one waited, and two workers never lease the same chunk (Neo4j's lost-update pattern). Returns the
// chunks leased, as distillation reads them.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
SET c.lease_lock = true
REMOVE c.lease_lock
WITH c
WHERE NOT $layer IN coalesce(c.distilled, [])
  AND (c.lease_owner IS NULL OR c.lease_until IS NULL OR c.lease_until < timestamp() OR c.lease_owner IN $dead_owners
       OR c.lease_owner = $owner)
SET c.lease_owner = $owner, c.lease_until = timestamp() + $lease_ms
WITH c
ORDER BY c.id
RETURN c.id AS id, c.document_id AS document_id, c.text AS text, coalesce(c.title, '') AS title,
       c.order AS order, coalesce(c.summary, '') AS summary
