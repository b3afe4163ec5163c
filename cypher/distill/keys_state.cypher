// Template ({index}): the version of the keys every node of that keyword full-text index holds, recorded on the
// meta node under the index's name (kg.layers.distilled.stored_keys; null: not all have them).
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.{index} AS version
