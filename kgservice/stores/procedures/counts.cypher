// counts: sizes for `kg stats` and the contract tests.
// parameters: none
// returns: units, nodes, relations, superseded_units, kinds (list of {kind, n})
CALL () { MATCH (u:Unit {ws: $ws}) RETURN count(u) AS units }
CALL () { MATCH (n:Node {ws: $ws}) RETURN count(n) AS nodes }
CALL () { MATCH (:Node {ws: $ws})-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT]->() RETURN count(r) AS relations }
CALL () { MATCH (u:Unit {ws: $ws}) WHERE (u)-[:SUPERSEDED_BY]->() RETURN count(u) AS superseded_units }
CALL () { MATCH (u:Unit {ws: $ws}) WITH u.kind AS kind, count(*) AS n RETURN collect({kind: kind, n: n}) AS kinds }
RETURN units, nodes, relations, superseded_units, kinds
