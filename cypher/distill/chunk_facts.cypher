// The chunks' facts with the types of their entities: typed entity pairs for relation rows.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})<-[:FACT_OF]-(f:Fact)
MATCH (f)-[:SUBJECT]->(h:Entity), (f)-[:OBJECT]->(t:Entity)
RETURN c.id AS chunk_id, f.id AS fact_id, f.document_id AS document_id, f.head AS head, h.type AS head_type,
       f.relation AS relation, f.tail AS tail, t.type AS tail_type
ORDER BY f.id
