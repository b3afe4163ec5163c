// Quantitative questions: aggregate one column of a table's Row nodes in Cypher. Cells are "col=value";
// the optional filter keeps rows having a cell $where_column=$where_value (case-insensitive).
MATCH (r:Row {table_id: $table_id})
WHERE $where_column IS NULL OR any(cell IN r.cells WHERE toLower(cell) = toLower($where_column + '=' + $where_value))
WITH r, [cell IN r.cells WHERE cell STARTS WITH $column + '=' | substring(cell, size($column) + 1)][0] AS raw
WITH r, raw, toFloat(replace(raw, ',', '')) AS value
RETURN count(r) AS rows, count(value) AS numeric, sum(value) AS total, avg(value) AS mean,
       min(value) AS minimum, max(value) AS maximum, collect(r.id)[..20] AS row_ids
