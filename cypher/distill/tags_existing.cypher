UNWIND $ids AS id
MATCH (t:Tag {id: id})
RETURN t.id AS id
