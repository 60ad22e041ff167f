// subject_mentions: units whose subject is the node.
// parameters: $id (node id)
// returns: unit (unit id), ordered
MATCH (:Node {id: $id})<-[:SUBJECT]-(u:Unit)
RETURN u.id AS unit
ORDER BY unit
