// Whether any node of a label exists (a template: {label} comes from the allow-list). One index probe.
MATCH (n:{label}) RETURN count(n) > 0 AS present
