CALL db.labels() YIELD label
CALL { WITH label MATCH (n) WHERE label IN labels(n) RETURN count(n) AS nodes }
RETURN label, nodes ORDER BY label
