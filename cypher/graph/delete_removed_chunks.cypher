// Hidden chunks of a document being replaced in several transactions that its new version does not have, with
// the nodes distilled from them alone (atoms, facts, table rows); its mind-map nodes go by label.
UNWIND $ids AS id
MATCH (c:HiddenChunk {id: id})
CALL (c) {
  MATCH (c)<-[:ATOM_OF|FACT_OF]-(n)
  DETACH DELETE n
}
CALL (c) {
  MATCH (c)-[:HAS_ROW]->(r:Row)
  DETACH DELETE r
}
DETACH DELETE c
RETURN count(*) AS deleted
