UNWIND $ids AS id
MATCH (:Chunk {id: id})-[t:TAGGED]->(:Tag)
DELETE t
