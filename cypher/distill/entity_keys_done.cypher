// Every entity holds its name's block keys, as $version keys them.
MATCH (m:StrataMeta {id: 'strata'})
SET m.entity_blocks = $version
