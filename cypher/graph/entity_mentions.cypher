// The chunks that mention an entity, in document order, with the names they used for it.
MATCH (e:Entity {id: $id})<-[m:MENTIONS]-(c:Chunk)
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.document_id AS document_id, c.title AS title, d.source AS source, c.page AS page,
       c.char_start AS char_start, c.char_end AS char_end, c.text AS chunk_text, coalesce(m.names, []) AS names
ORDER BY c.document_id, c.order
LIMIT $limit
