// The documents read from one file (a QA corpus holds many), found by the file they came from.
MATCH (d:Document {file: $file})
RETURN d.id AS id
