// Chunks whose LLM task for $layer finally failed: retried by `strata distill`, not by every later load.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
SET c.distill_failed = [x IN coalesce(c.distill_failed, []) WHERE x <> $layer] + $layer
