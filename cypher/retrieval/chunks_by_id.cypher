// Chunks by id with their raw cosine to $vector (null when no vector is given or the chunk has none).
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences,
       CASE WHEN $vector IS NULL OR c.embedding IS NULL THEN null
            ELSE 2 * vector.similarity.cosine(c.embedding, $vector) - 1 END AS score
