// Template ({index}): every node of that index holds its keys, as $version keys them.
MATCH (m:StrataMeta {id: 'strata'})
SET m.{index} = $version
RETURN count(*) AS count
