// restore_clear: the restore recorded by restore_mark finished: forget it.
// parameters: none
// returns: nothing
MATCH (m:KgRestore {ws: $ws}) DELETE m
