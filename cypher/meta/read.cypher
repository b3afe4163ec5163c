MATCH (m:StrataMeta {id: 'strata'})
RETURN m.schema_version AS schema_version, m.embedder AS embedder, m.dimensions AS dimensions
