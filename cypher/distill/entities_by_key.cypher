UNWIND $keys AS key
MATCH (e:Entity {key: key})
RETURN key, e.id AS id, e.name AS name, e.type AS type, e.aliases AS aliases
