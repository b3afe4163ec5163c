// A document's topic, linked to the document and (ITEM_OF, as fact items are) to every chunk of it.
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
CREATE (t:Topic {id: row.id})
SET t.document_id = row.document_id, t.text = row.text, t.path_text = row.path_text, t.source = row.source,
    t.fusion_pending = true
CREATE (t)-[:TOPIC_OF]->(d)
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'embedding', row.embedding)
WITH t, row
UNWIND row.chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})
CREATE (t)-[:ITEM_OF]->(c)
