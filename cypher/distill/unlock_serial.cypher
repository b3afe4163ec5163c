// The job-wide lock of distill/lock_serial is given back by its owner.
MATCH (m:StrataMeta {id: 'strata'})
WHERE m.distill_lock_owner = $owner
REMOVE m.distill_lock_owner, m.distill_lock_until
