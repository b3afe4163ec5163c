UNWIND $rows AS row
CREATE (d:Document {id: row.id})
SET d.title = row.title, d.source = row.source, d.file = row.file, d.sha256 = row.sha256, d.format = row.format,
    d.pages = row.pages, d.metadata = row.metadata, d.language = row.language,
    d.source_name = row.source_name, d.title_key = row.title_key,
    d.link_targets = row.link_targets, d.has_links = size(row.link_targets) > 0,
    d.mention_query = row.mention_query, d.mention_pattern = row.mention_pattern, d.mentions_pending = true,
    d.loaded_at = datetime()
WITH d, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(d, 'embedding', row.embedding)
