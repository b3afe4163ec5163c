UNWIND $rows AS row
CREATE (r:Route {id: row.id})
SET r.document_id = row.document_id, r.text = row.text, r.path_text = row.path_text, r.depth = row.depth
