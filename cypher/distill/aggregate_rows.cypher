// count/sum/avg/min/max of one typed column over the rows of a table (all rows when $table_id is null),
// filtered on normalised cells ($cells: "column=value") and numeric equalities ($numbers: {prop, value}).
// $prop is a sanitised, allow-listed property name read with r[$prop]: nothing is interpolated.
MATCH (r:Row)
WHERE ($table_id IS NULL OR r.table_id = $table_id)
  AND all(x IN $cells WHERE x IN r.cell_keys)
  AND all(n IN $numbers WHERE r[n.prop] = n.value)
WITH r, r[$prop] AS v, $column_key AS col
WITH r, v, [x IN r.cell_keys WHERE x STARTS WITH col + '='] AS present
WHERE v IS NOT NULL OR size(present) > 0
RETURN count(r) AS count, sum(v) AS sum, avg(v) AS avg, min(v) AS min, max(v) AS max
