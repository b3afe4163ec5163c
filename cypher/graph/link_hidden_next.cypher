// NEXT between consecutive hidden chunks of a large document, within a batch and across its first boundary.
UNWIND $rows AS row
MATCH (a:HiddenChunk {id: row.a}), (b:HiddenChunk {id: row.b})
MERGE (a)-[:NEXT]->(b)
