// life_change_record: append a lifecycle change (the history: kg history, kg undo), last in its
// transaction. (:Change {id, seq, ord, kind, at, who, json}); ord is the append position,
// seq the record's own number (kept as dumped by kg restore).
// parameters: $id, $seq, $ord, $kind, $at, $who, $json
// returns: seq
CREATE (c:Change {ws: $ws, id: $id, seq: $seq, ord: $ord, kind: $kind, at: $at, who: $who, json: $json})
RETURN c.seq AS seq
