// Entities whose name or an alias contains the phrase (full-text); the caller keeps exact matches.
UNWIND $rows AS row
CALL db.index.fulltext.queryNodes('entity_names', row.query, {limit: $limit}) YIELD node, score
RETURN row.key AS key, node.id AS id, node.name AS name, node.type AS type, node.aliases AS aliases, score
