// Nodes owned by the documents (they carry document_id), one label at a time from the allow-list.
UNWIND $ids AS id
MATCH (n:{label} {document_id: id})
DETACH DELETE n
