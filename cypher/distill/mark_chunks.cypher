// A chunk's layer is done (in the transaction that wrote it); layers in $stale must run again on it. The
// chunk's lease ends with it.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
SET c.distilled = [x IN coalesce(c.distilled, []) WHERE x <> $layer AND NOT x IN $stale] + $layer,
    c.distill_failed = [x IN coalesce(c.distill_failed, []) WHERE x <> $layer]
REMOVE c.lease_owner, c.lease_until
