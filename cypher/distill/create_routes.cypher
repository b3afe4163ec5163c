// Routes, each linked (ITEM_OF) to the chunks of the fact items under it; link_routes hangs them up.
UNWIND $rows AS row
CREATE (r:Route {id: row.id})
SET r.document_id = row.document_id, r.text = row.text, r.path_text = row.path_text, r.depth = row.depth
WITH r, row
CALL db.create.setNodeVectorProperty(r, 'embedding', row.embedding)
WITH r, row
UNWIND row.chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})
CREATE (r)-[:ITEM_OF]->(c)
