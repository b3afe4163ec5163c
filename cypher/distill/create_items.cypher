UNWIND $rows AS row
MATCH (r:Route {id: row.route_id})
MATCH (c:Chunk {id: row.chunk_id})
CREATE (f:FactItem {id: row.id})
SET f.document_id = row.document_id, f.chunk_id = row.chunk_id, f.text = row.text, f.path_text = row.path_text,
    f.topic = row.topic, f.rouge_l = row.rouge_l, f.similarity = row.similarity, f.source = row.source,
    f.fusion_pending = true
CREATE (r)-[:HAS_ITEM]->(f), (f)-[:ITEM_OF]->(c)
WITH f, row
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
