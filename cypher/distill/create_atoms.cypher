UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
CREATE (a:Atom {id: row.id})
SET a.document_id = row.document_id, a.chunk_id = row.chunk_id, a.kind = row.kind, a.text = row.text,
    a.source = row.source
CREATE (a)-[:ATOM_OF]->(c)
WITH a, row
CALL db.create.setNodeVectorProperty(a, 'embedding', row.embedding)
