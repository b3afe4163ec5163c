// Chunks whose LLM task for $layer finally failed: retried by `strata distill`, not by every later load. The
// lease ends (the worker that failed them does not claim them again in the same run).
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
SET c.distill_failed = [x IN coalesce(c.distill_failed, []) WHERE x <> $layer] + $layer
REMOVE c.lease_owner, c.lease_until
