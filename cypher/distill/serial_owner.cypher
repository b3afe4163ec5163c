// Who holds the job-wide lock of distill/lock_serial (null: nobody).
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.distill_lock_owner AS owner
