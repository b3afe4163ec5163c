// Whether every document of this graph has its title keyed (kg.layers.resource.references); null: not known yet.
MATCH (m:StrataMeta {id: 'strata'})
RETURN m.mention_keys AS done
