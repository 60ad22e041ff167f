// admin_unit_edges: the reverse-index edges of every unit (kg doctor).
// parameters: none
// returns: unit, type ('SUBJECT' | 'ARG' | 'MOD'), pos (ARG), slot (MOD), node
MATCH (u:Unit {ws: $ws})-[e:SUBJECT|ARG|MOD]->(n:Node {ws: $ws})
RETURN u.id AS unit, type(e) AS type, e.pos AS pos, e.slot AS slot, n.id AS node
