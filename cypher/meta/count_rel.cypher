// Answered from Neo4j's count store, without a scan.
MATCH ()-[r:{rel}]->() RETURN count(r) AS count
