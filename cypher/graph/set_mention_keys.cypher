// Key documents written before titles were keyed (kg.layers.resource.references), and record that every one is.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.mention_key = row.key
