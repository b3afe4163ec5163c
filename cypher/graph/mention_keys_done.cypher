// Every document's title is keyed as $version keys titles (kg.layers.resource.references).
MATCH (m:StrataMeta {id: 'strata'})
SET m.mention_keys = $version
