SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state, populationPercent
RETURN name, type, labelsOrTypes, properties, state, populationPercent ORDER BY name
