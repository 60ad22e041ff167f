// aliases_remove: delete duplicate aliases by id, for `kg doctor --repair` (an alias whose id is
// also a stored unit's is never read: validation asks only about ids that are not units).
// parameters: $ids (list of alias ids)
// returns: removed (how many were deleted)
MATCH (a:UnitAlias {ws: $ws})
WHERE a.id IN $ids
DELETE a
RETURN count(*) AS removed
