// Nodes owned by the documents (they carry document_id), one label at a time from the allow-list, except the
// chunks $keep and the nodes distilled from those chunks alone (an atom or fact names its one chunk in
// chunk_id): a replaced document's unchanged chunks keep them.
UNWIND $ids AS id
MATCH (n:{label} {document_id: id})
WHERE NOT coalesce(n.chunk_id, n.id) IN $keep
DETACH DELETE n
