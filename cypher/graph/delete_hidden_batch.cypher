// Up to $limit hidden chunks of the documents (a large version being deleted, or one whose write was cut short).
UNWIND $ids AS id
MATCH (n:HiddenChunk {document_id: id})
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
