// context_mentions: units where the node is an argument or a modifier value.
// parameters: $id (node id)
// returns: unit (unit id), ordered, distinct
MATCH (:Node {id: $id})<-[:ARG|MOD]-(u:Unit)
RETURN DISTINCT u.id AS unit
ORDER BY unit
