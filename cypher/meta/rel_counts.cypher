CALL db.relationshipTypes() YIELD relationshipType AS type
CALL { WITH type MATCH ()-[r]->() WHERE type(r) = type RETURN count(r) AS relationships }
RETURN type, relationships ORDER BY type
