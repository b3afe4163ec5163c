// Name documents written before documents were named (kg.layers.resource.references). A document named otherwise
// than by its title gets that name's mention keys and is linked again (mentions_pending), both ways.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.mention_name = row.name
FOREACH (renamed IN CASE WHEN row.renamed THEN [true] ELSE [] END |
  SET d.mention_query = row.query, d.mention_pattern = row.pattern, d.mention_key = row.key,
      d.mentions_pending = renamed)
