// How many chunks the documents hold, hidden ones included: whether deleting them fits one transaction.
UNWIND $ids AS id
RETURN sum(COUNT { (c:Chunk {document_id: id}) } + COUNT { (h:HiddenChunk {document_id: id}) }) AS count
