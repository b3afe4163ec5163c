// Whether every entity has its name's block keys (kg.layers.distilled.resolve.ensure_entity_blocks).
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.entity_blocks AS version
