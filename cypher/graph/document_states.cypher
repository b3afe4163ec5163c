// The stored content hash of each requested document (absent ids are not loaded yet). A document whose
// write or deletion in several transactions was begun and not finished has none (''), so loading its file
// again replaces it.
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, CASE WHEN d.deleting OR d.loading THEN '' ELSE d.sha256 END AS sha256
