UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (h:Entity {id: row.head_id})
MATCH (t:Entity {id: row.tail_id})
CREATE (f:Fact {id: row.id})
SET f.document_id = row.document_id, f.chunk_id = row.chunk_id, f.head = row.head, f.relation = row.relation,
    f.tail = row.tail, f.text = row.text, f.source = row.source
CREATE (f)-[:FACT_OF]->(c), (f)-[:SUBJECT]->(h), (f)-[:OBJECT]->(t)
WITH f, row WHERE row.embedding IS NOT NULL  // a co-occurrence has none (kg.layers.distilled.triples)
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
