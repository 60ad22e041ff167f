// life_orphans: after a lifecycle change's retractions and new units (same transaction), the
// nodes the retracted units mentioned that no live unit mentions any more are removed (their
// :KgVector, if vectors live in this database, in the same transaction: vectors_delete.cypher;
// the caller deletes them from any other vector store), and a derived node that was derived only because a retracted
// narrows unit had it as subject is an entry node again.
// Two statements. parameters: $nodes (node ids the retracted units mentioned), $subjects
// (subjects of retracted narrows units).
// 1. returns: orphans (the removed node ids)
MATCH (n:Node {ws: $ws}) WHERE n.id IN $nodes
  AND NOT EXISTS { (n)<-[:SUBJECT|ARG|MOD]-(:Unit {ws: $ws}) }
WITH n, n.id AS id
DETACH DELETE n
RETURN collect(id) AS orphans;
MATCH (n:Node {ws: $ws, kind: 'derived'}) WHERE n.id IN $subjects
  AND NOT EXISTS { (n)<-[:SUBJECT]-(:Unit {ws: $ws, kind: 'narrows'}) }
SET n.kind = 'entry'
RETURN count(n) AS entries
