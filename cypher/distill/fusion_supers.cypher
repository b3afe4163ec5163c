// Template ({label}): the fusion node each member already belongs to.
UNWIND $ids AS id
MATCH (x:{label} {id: id})<-[:SIMILAR]-(s)
RETURN x.id AS id, s.id AS super_id
