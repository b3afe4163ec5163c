UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
CREATE (t:Topic {id: row.id})
SET t.document_id = row.document_id, t.text = row.text, t.path_text = row.text, t.source = row.source
CREATE (t)-[:TOPIC_OF]->(d)
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'embedding', row.embedding)
