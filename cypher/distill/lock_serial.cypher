// The job-wide lock of a layer whose batches read what earlier batches wrote (entity resolution): taken
// before such a batch reads, given back in the transaction that writes it (distill/unlock_serial), so
// several workers resolve one batch at a time against everything written before, as one worker does. The
// first SET takes the node's write lock before the owner is read (see claim_chunks). A lock past its expiry,
// or held by an owner in $dead_owners, is taken over. No row: another worker holds it.
MATCH (m:StrataMeta {id: 'strata'})
SET m.distill_lock_touch = true
REMOVE m.distill_lock_touch
WITH m
WHERE m.distill_lock_owner IS NULL OR m.distill_lock_until < timestamp() OR m.distill_lock_owner = $owner
   OR m.distill_lock_owner IN $dead_owners
SET m.distill_lock_owner = $owner, m.distill_lock_until = timestamp() + $lease_ms
RETURN m.distill_lock_owner AS owner
