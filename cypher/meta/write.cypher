MERGE (m:StrataMeta {id: 'strata'})
SET m.schema_version = $schema_version, m.embedder = $embedder, m.dimensions = $dimensions,
    m.updated_at = datetime()
