// Per distilled layer in $layers: the chunks it has not distilled yet (pending work), and all chunks.
MATCH (c:Chunk)
UNWIND $layers AS layer
WITH layer, c
RETURN layer, count(c) AS chunks, sum(CASE WHEN layer IN coalesce(c.distilled, []) THEN 0 ELSE 1 END) AS pending
