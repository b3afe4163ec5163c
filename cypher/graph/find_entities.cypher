// Entities for a name: full-text matches of $query on names and aliases, an exact (case-insensitive) name or
// alias match of $wanted first, each with how many facts and mentioning chunks it has.
CALL db.index.fulltext.queryNodes('entity_names', $query, {limit: $limit}) YIELD node AS e, score
WITH e, score, toLower(e.name) = toLower($wanted)
     OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) = toLower($wanted)) AS exact
RETURN e.id AS id, e.name AS name, e.type AS type, coalesce(e.aliases, []) AS aliases, exact, score,
       COUNT { (e)<-[:SUBJECT|OBJECT]-() } AS facts, COUNT { (e)<-[:MENTIONS]-() } AS mentions
ORDER BY exact DESC, score DESC, facts DESC
