// The rows of one table ranked by a typed numeric column (argmax / argmin questions), after the same
// cell filters as distill/aggregate_rows ($cells: normalised "column=value", $numbers: {prop, value}).
// $prop is a sanitised property name read with r[$prop]: nothing is interpolated.
MATCH (r:Row {table_id: $table_id})
WHERE all(x IN $cells WHERE x IN r.cell_keys)
  AND all(n IN $numbers WHERE r[n.prop] = n.value)
  AND r[$prop] IS NOT NULL
WITH r, toFloat(r[$prop]) AS value
RETURN r.cells AS cells, value, r.index AS index
ORDER BY CASE WHEN $descending THEN -value ELSE value END, index
LIMIT $k
