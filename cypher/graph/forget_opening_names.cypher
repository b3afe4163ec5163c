// Documents named by their opening before names had short forms (mention keys version 3), a page ($limit) at a
// time: their name is forgotten, so the naming pass (unnamed_documents, set_mention_names) names them again.
MATCH (d:Document) WHERE d.mention_name IS NOT NULL AND d.mention_name <> d.title
WITH d LIMIT $limit
SET d.mention_name = null
RETURN count(d) AS forgotten
