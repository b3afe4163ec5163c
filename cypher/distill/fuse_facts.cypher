UNWIND $rows AS row
MERGE (s:SuperFact {id: row.super_id})
WITH s, row
UNWIND row.members AS member
MATCH (x:FactItem {id: member})
MERGE (s)-[:SIMILAR]->(x)
