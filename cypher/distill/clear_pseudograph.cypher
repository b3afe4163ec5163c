// The mind maps over the chunks $ids (topics, routes, fact items) before they are written again. A batch is
// whole document parts, so these are whole mind maps: each node links (ITEM_OF) only to chunks of its part.
UNWIND $ids AS id
MATCH (:Chunk {id: id})<-[:ITEM_OF]-(n)
WHERE n:FactItem OR n:Route OR n:Topic
WITH DISTINCT n
DETACH DELETE n
