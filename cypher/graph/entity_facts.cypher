// The facts about an entity (as subject or object), each with the chunk that states it, a page at a time.
MATCH (:Entity {id: $id})<-[role:SUBJECT|OBJECT]-(f:Fact)-[:FACT_OF]->(c:Chunk)
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN f.id AS fact_id, f.head AS head, f.relation AS relation, f.tail AS tail, f.text AS text,
       f.source AS method, toLower(type(role)) AS role,
       c.id AS chunk_id, c.document_id AS document_id, c.title AS title, d.source AS source, c.page AS page,
       c.char_start AS char_start, c.char_end AS char_end, c.text AS chunk_text
ORDER BY c.document_id, c.order, f.id
SKIP $skip LIMIT $limit
