// Shared nodes left without any link into the graph: entities no chunk mentions and no fact names, tags
// no chunk carries, fusion nodes with no member. Template: {label} from the allow-list.
MATCH (x:{label}) WHERE x.id IN $ids AND NOT (x)<-[:MENTIONS|TAGGED|SUBJECT|OBJECT]-()
DETACH DELETE x
