// stage_nodes: a batch's new nodes, created invisible to readers.
// parameters: $stage, $nodes (list of {id, label, kind}). returns: nothing.
// Every read matches :Node, so a :StagedNode is seen by nobody until stage_publish relabels
// it. No uniqueness is checked here: a node another writer publishes first makes this
// stage's publish fail on the node_id constraint, and the ingest is retried.
UNWIND $nodes AS n
CREATE (:StagedNode {ws: $ws, id: n.id, label: n.label, kind: n.kind, stage: $stage})
