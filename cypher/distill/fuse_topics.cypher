UNWIND $rows AS row
MERGE (s:SuperTopic {id: row.super_id})
WITH s, row
UNWIND row.members AS member
MATCH (x:Topic {id: member})
MERGE (s)-[:SIMILAR]->(x)
