// The stored content hash of each requested document (absent ids are not loaded yet).
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.sha256 AS sha256
