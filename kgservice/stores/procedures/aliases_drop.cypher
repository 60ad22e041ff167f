// aliases_drop: duplicate aliases that stop being aliases, inside the transaction of the change
// that makes it so. Two statements:
// 1. $ids: ids that became units of their own (a new unit took the id of an alias whose unit is
//    archived);
// 2. $units: units whose aliases go while no live unit has their id: purged archived units, and
//    units edited in place (retracted and added again with the same id by one change; run
//    between the two: a duplicate of the old version is none of the new one).
// returns: removed (how many)
UNWIND $ids AS id
MATCH (a:UnitAlias {ws: $ws, id: id})
DELETE a
RETURN count(*) AS removed;
UNWIND $units AS unit
MATCH (a:UnitAlias {ws: $ws, unit: unit})
WHERE NOT EXISTS { MATCH (:Unit {ws: $ws, id: unit}) }
DELETE a
RETURN count(*) AS removed
