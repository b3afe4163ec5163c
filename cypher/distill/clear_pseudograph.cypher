// A document's mind map (topic, routes, fact items) before it is written again.
UNWIND $ids AS id
CALL (id) { MATCH (n:FactItem {document_id: id}) DETACH DELETE n }
CALL (id) { MATCH (n:Route {document_id: id}) DETACH DELETE n }
CALL (id) { MATCH (n:Topic {document_id: id}) DETACH DELETE n }
