// schema_3_pending: whether step 3 (schema_3.cypher) has anything to do: a node of a
// knowledge-base label without `ws`. A store whose version record is gone (a wipe of every node
// removes it) but whose nodes all carry `ws` was written by this release: the step then only
// swaps constraints and is applied in place, not refused (kgservice/stores/schema.py, needed).
// parameters: none. returns: todo
RETURN EXISTS {
  MATCH (n)
  WHERE n.ws IS NULL AND (n:Node OR n:Unit OR n:UnitAlias OR n:Document OR n:RetractedUnit OR n:Change
    OR n:KgMeta OR n:KgChange OR n:KgJob OR n:KgSavedResult OR n:KgCommunities OR n:KgMergeDecision
    OR n:KgVector OR n:KgVectorSet OR n:KgMirrorChunk OR n:KgRestore OR n:StagedNode OR n:StagedUnit
    OR n:IngestStage)
} AS todo
