// Run on the system database: whether the database $name exists.
SHOW DATABASES YIELD name WHERE name = $name
RETURN count(*) > 0 AS exists
