// The analyzer each of the named full-text indexes was created with (an index keeps it for its life).
SHOW FULLTEXT INDEXES YIELD name, options
WHERE name IN $names
RETURN name, options.indexConfig['fulltext.analyzer'] AS analyzer
