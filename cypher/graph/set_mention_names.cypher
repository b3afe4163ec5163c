// Name documents written before documents were named (kg.layers.resource.references). A document named otherwise
// than by its title gets that name's mention keys (and its short forms', row.names: null when it has none) and
// is linked again (mentions_pending), both ways.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.mention_name = row.name, d.mention_names = row.names
FOREACH (renamed IN CASE WHEN row.renamed THEN [true] ELSE [] END |
  SET d.mention_query = row.query, d.mention_pattern = row.pattern, d.mention_key = row.key,
      d.mentions_pending = renamed)
