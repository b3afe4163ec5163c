// Table rows holding one normalised cell ("column=value"): the bridge from an aggregation's winning row
// to what other tables record about the same thing.
MATCH (r:Row)
WHERE r.table_id IS NOT NULL AND $cell IN r.cell_keys
RETURN r.table_id AS table_id, r.cells AS cells
ORDER BY r.table_id, r.index
LIMIT $k
