// vectors_count: how many node vectors there are.
// parameters: none
// returns: n
MATCH (v:KgVector {ws: $ws})
RETURN count(v) AS n
