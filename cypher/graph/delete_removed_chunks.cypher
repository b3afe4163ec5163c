// Hidden chunks of a document being replaced in several transactions that its new version does not have, with
// the nodes distilled from them alone (atoms, facts); the document's rows and mind-map nodes go by label.
UNWIND $ids AS id
MATCH (c:HiddenChunk {id: id})
OPTIONAL MATCH (c)<-[:ATOM_OF|FACT_OF]-(n)
DETACH DELETE n
WITH DISTINCT c
DETACH DELETE c
RETURN count(*) AS deleted
