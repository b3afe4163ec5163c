// The tag classes the LLM proposed for this corpus, kept so later runs tag with the same classes.
MERGE (m:StrataMeta {id: 'strata'})
SET m.tag_classes = $tag_classes
