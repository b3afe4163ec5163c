// Tags are shared across documents: MERGE on the id derived from (class, normalised name); aliases
// (colloquial terms that map to the tag) accumulate.
UNWIND $rows AS row
MERGE (t:Tag {id: row.id})
ON CREATE SET t.name = row.name, t.class = row.class, t.name_key = row.name_key, t.source = row.source,
    t.aliases = [], t.alias_keys = []
SET t.aliases = reduce(acc = t.aliases, a IN row.aliases | CASE WHEN a IN acc THEN acc ELSE acc + a END),
    t.alias_keys = reduce(acc = t.alias_keys, a IN row.alias_keys | CASE WHEN a IN acc THEN acc ELSE acc + a END)
