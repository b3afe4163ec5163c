// REFERENCES from each new document to loaded documents its links name (by file name or title key),
// and from loaded documents with links to the new ones. Only documents that have links are scanned
// for the reverse direction (indexed has_links), so a corpus without links costs nothing.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
CALL (d, row) {
  UNWIND row.targets AS key
  MATCH (other:Document) WHERE other.source_name = key AND other.id <> d.id
  MERGE (d)-[:REFERENCES]->(other)
  RETURN count(*) AS by_name
}
CALL (d, row) {
  UNWIND row.targets AS key
  MATCH (other:Document) WHERE other.title_key = key AND other.id <> d.id
  MERGE (d)-[:REFERENCES]->(other)
  RETURN count(*) AS by_title
}
CALL (d) {
  MATCH (other:Document) WHERE other.has_links = true AND other.id <> d.id
    AND any(t IN other.link_targets WHERE t = d.source_name OR t = d.title_key)
  MERGE (other)-[:REFERENCES]->(d)
  RETURN count(*) AS incoming
}
RETURN count(d) AS documents
