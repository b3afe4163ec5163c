// Every fact item holds its path text's fusion keys, as $version keys them.
MATCH (m:StrataMeta {id: 'strata'})
SET m.factitem_fusion_keys = $version
