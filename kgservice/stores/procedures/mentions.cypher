// mentions: units that mention the node at all: as subject, argument or modifier value
// (subject_mentions and context_mentions together), for the readers that want every unit
// about a node (retrieval, drill-down, the entry step's specificity, neighbours).
// parameters: $id (node id)
// returns: one row: units (list of distinct unit ids, ordered); one list, not a row per unit,
//          because a hub concept is mentioned by tens of thousands of units
MATCH (:Node {id: $id})<-[:SUBJECT|ARG|MOD]-(u:Unit)
WITH DISTINCT u.id AS unit ORDER BY unit
RETURN collect(unit) AS units
