// The version of the fusion keys every fact item holds (kg.layers.distilled.stored_keys; null: not all have them).
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.factitem_fusion_keys AS version
