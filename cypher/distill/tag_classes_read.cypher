MATCH (m:StrataMeta {id: 'strata'})
RETURN m.tag_classes AS tag_classes
