// The documents' chunks leave retrieval at once (one transaction, labels only) when a deletion in several
// transactions begins: the rest of the deletion removes what nobody sees any more.
UNWIND $ids AS id
MATCH (c:Chunk {document_id: id})
REMOVE c:Chunk
SET c:HiddenChunk
