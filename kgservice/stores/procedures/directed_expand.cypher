// directed_expand: every read directed expansion (kgservice/expansion/directed.py) makes for
// a set of seeds, in one round trip instead of ~14 procedure calls per seed. It walks what
// the single-purpose procedures walk, with the same patterns and bounds:
//   seed -> node_superseded_end -> focus nodes -> synonym_class -> members;
//   per member and per base a member narrows: subject_mentions, context_mentions,
//   belongs_to_closure (ancestors + depth), narrowed_by, narrows; per ancestor: synonym_class; subject_mentions of every ancestor
//   synonym and every base; superseded_end of every unit collected.
// parameters: $ids (seed node ids)
// returns: one row of lists of [key, value] pairs; values are unordered lists (the caller
//          sorts them as the single-purpose procedures do); seeds that are not stored
//          nodes are absent:
//   node_ends    [seed id, [terminal node ids]]    ([] when nothing replaces the seed)
//   classes      [node id, [≡ class member ids]]   (focus nodes and ancestors; may repeat the node)
//   ancestors    [member id, [[ancestor id, depth]]]
//   subject      [node id, [unit ids]]             (members, ancestors' synonyms, bases)
//   context      [member id, [unit ids]]
//   narrowed_by  [member id, [derived node ids]]
//   narrows      [member id, [base node ids]]
//   unit_ends    [unit id, [terminal unit ids]]    (superseded units only)
UNWIND $ids AS sid
MATCH (s:Node {ws: $ws, id: sid})
CALL (s) {
  OPTIONAL MATCH (s)(()-[r:SUPERSEDED WHERE r.live]->()){1,10}(t:Node {ws: $ws})
  WHERE NOT (t)-[:SUPERSEDED {live: true}]->()
  RETURN collect(DISTINCT t) AS ends
}
WITH collect([s, ends]) AS seedEnds
CALL (seedEnds) {
  UNWIND reduce(acc = [], x IN seedEnds | acc + [x[0]] + x[1]) AS f
  WITH DISTINCT f
  OPTIONAL MATCH (f)-[:SYNONYM*1..10 {live: true}]-(m:Node {ws: $ws})
  WITH f, collect(DISTINCT m) AS others
  RETURN collect([f, others]) AS focusClasses
}
CALL (focusClasses) {
  UNWIND reduce(acc = [], c IN focusClasses | acc + [c[0]] + c[1]) AS m0
  WITH DISTINCT m0
  // bases of the members too: a derived node inherits its base's belongs-to facts
  UNWIND [m0] + COLLECT { MATCH (m0)<-[r:NARROWED_BY]-(b:Node {ws: $ws}) WHERE r.live RETURN DISTINCT b } AS m
  WITH DISTINCT m
  RETURN collect([
    m,
    COLLECT { MATCH p = ANY SHORTEST (m)(()-[r:BELONGS_TO WHERE r.live]->()){1,10}(a:Node {ws: $ws})
              WHERE a <> m
              RETURN [a, length(p)] },
    COLLECT { MATCH (m)<-[:SUBJECT]-(u:Unit {ws: $ws}) RETURN u },
    COLLECT { MATCH (m)<-[:ARG|MOD]-(u:Unit {ws: $ws}) RETURN DISTINCT u },
    COLLECT { MATCH (m)-[r:NARROWED_BY]->(d:Node {ws: $ws}) WHERE r.live RETURN DISTINCT d },
    COLLECT { MATCH (m)<-[r:NARROWED_BY]-(b:Node {ws: $ws}) WHERE r.live RETURN DISTINCT b }
  ]) AS memberRows
}
CALL (memberRows) {
  UNWIND reduce(acc = [], r IN memberRows | acc + [x IN r[1] | x[0]]) AS a
  WITH DISTINCT a
  OPTIONAL MATCH (a)-[:SYNONYM*1..10 {live: true}]-(m:Node {ws: $ws})
  WITH a, collect(DISTINCT m) AS others
  RETURN collect([a, others]) AS ancestorClasses
}
CALL (memberRows, ancestorClasses) {
  UNWIND reduce(acc = reduce(b = [], r IN memberRows | b + r[5]), c IN ancestorClasses | acc + [c[0]] + c[1]) AS x
  WITH DISTINCT x
  RETURN collect([x, COLLECT { MATCH (x)<-[:SUBJECT]-(u:Unit {ws: $ws}) RETURN u }]) AS extraRows
}
CALL (memberRows, extraRows) {
  UNWIND reduce(acc = reduce(b = [], r IN memberRows | b + r[2] + r[3]), r IN extraRows | acc + r[1]) AS u
  WITH DISTINCT u
  WHERE EXISTS { (u)-[:SUPERSEDED_BY]->() }
  MATCH (u)(()-[:SUPERSEDED_BY]->())+(t:Unit {ws: $ws})
  WHERE NOT (t)-[:SUPERSEDED_BY]->()
  WITH u, collect(DISTINCT t.id) AS ends
  RETURN collect([u.id, ends]) AS unitEnds
}
RETURN [x IN seedEnds | [x[0].id, [e IN x[1] | e.id]]] AS node_ends,
       [c IN focusClasses + ancestorClasses | [c[0].id, [m IN c[1] | m.id]]] AS classes,
       [r IN memberRows | [r[0].id, [a IN r[1] | [a[0].id, a[1]]]]] AS ancestors,
       [r IN memberRows | [r[0].id, [u IN r[2] | u.id]]] + [r IN extraRows | [r[0].id, [u IN r[1] | u.id]]] AS subject,
       [r IN memberRows | [r[0].id, [u IN r[3] | u.id]]] AS context,
       [r IN memberRows | [r[0].id, [d IN r[4] | d.id]]] AS narrowed_by,
       [r IN memberRows | [r[0].id, [b IN r[5] | b.id]]] AS narrows,
       unitEnds AS unit_ends
