// Every document written before titles were keyed now is (kg.layers.resource.references).
MATCH (m:StrataMeta {id: 'strata'})
SET m.mention_keys = true
