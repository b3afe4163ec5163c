// A route hangs off its parent route, or off the topic at depth 1. Run after create_routes: a MATCH
// cannot see nodes created earlier in the same statement.
UNWIND $rows AS row
MATCH (r:Route {id: row.id})
OPTIONAL MATCH (pr:Route {id: row.parent_id})
OPTIONAL MATCH (pt:Topic {id: row.parent_id})
WITH r, coalesce(pr, pt) AS parent
CREATE (parent)-[:HAS_ROUTE]->(r)
