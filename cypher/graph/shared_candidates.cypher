// Shared nodes that the documents' chunks and facts reach; deleted afterwards only if orphaned.
UNWIND $ids AS id
MATCH (c:Chunk {document_id: id})-[:MENTIONS|TAGGED]->(x)
RETURN collect(DISTINCT x.id) AS ids
