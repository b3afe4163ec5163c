// Up to $limit shared nodes of {label} that nothing links to any more, wherever they are: after a deletion
// that an interruption cut short, the candidates it had found are not known any more.
MATCH (x:{label}) WHERE NOT (x)<-[:MENTIONS|TAGGED|SUBJECT|OBJECT]-()
WITH x LIMIT $limit
DETACH DELETE x
RETURN count(*) AS deleted
