UNWIND $rows AS row
CREATE (d:Document {id: row.id})
SET d.title = row.title, d.source = row.source, d.sha256 = row.sha256, d.format = row.format,
    d.pages = row.pages, d.metadata = row.metadata, d.language = row.language,
    d.source_name = row.source_name, d.title_key = row.title_key,
    d.link_targets = row.link_targets, d.has_links = size(row.link_targets) > 0,
    d.loaded_at = datetime()
WITH d, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(d, 'embedding', row.embedding)
