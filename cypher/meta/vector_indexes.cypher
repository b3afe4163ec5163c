SHOW VECTOR INDEXES YIELD name, labelsOrTypes, options
RETURN name, labelsOrTypes[0] AS label, options.indexConfig.`vector.dimensions` AS dimensions
