// A worker that stops (an error, an interrupt) gives back the chunks it still holds, so a run in the same
// process, or another worker, takes them at once.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE c.lease_owner = $owner
REMOVE c.lease_owner, c.lease_until
