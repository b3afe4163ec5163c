UNWIND $ids AS id
MATCH (:Chunk {id: id})<-[:ATOM_OF]-(a:Atom)
DETACH DELETE a
