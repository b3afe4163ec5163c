UNWIND $ids AS id
MATCH (d:Document {id: id})
DETACH DELETE d
