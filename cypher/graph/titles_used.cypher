// Whether any chunk of each document ($rows: id, core) holds the core of its title (kg.layers.resource.references:
// a document whose text never uses its title is named by its opening).
UNWIND $rows AS row
RETURN row.id AS id, EXISTS { MATCH (c:Chunk {document_id: row.id}) WHERE c.text CONTAINS row.core } AS used
