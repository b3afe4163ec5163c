// The first statement of a batch's write: takes the chunks' write locks before anything is cleared, so two
// writes of one chunk (a worker whose lease expired while it worked, and the worker that took it over)
// run one after the other, and the second clears what the first wrote instead of duplicating it.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
SET c.lease_lock = true
REMOVE c.lease_lock
