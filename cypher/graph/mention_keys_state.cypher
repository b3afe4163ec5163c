// How this graph's document titles are keyed (kg.layers.resource.references.MENTION_KEYS_VERSION; true is
// version 1); null: not known yet.
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.mention_keys AS version
