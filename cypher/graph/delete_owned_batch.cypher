// Up to $limit nodes owned by the documents (they carry document_id), one label at a time from the
// allow-list: a large document is deleted in a loop of these, each its own transaction.
UNWIND $ids AS id
MATCH (n:{label} {document_id: id})
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
