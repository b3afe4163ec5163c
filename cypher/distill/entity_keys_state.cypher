// The version of the name block keys every entity holds (kg.layers.distilled.stored_keys; null: not all have them).
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.entity_blocks AS version
