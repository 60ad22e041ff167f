// life_documents_set: set or remove document records, in a lifecycle change's transaction (after
// its retractions and units) or in kg restore's. A document is
// (:Document {id, title, sha256, mode, size, version, who, when, units, root, text_z, original_z, json})
// (json: the whole record but its compressed text and original file) and each unit it states points at it:
// (:Unit|:RetractedUnit)-[:FROM {lines: [first, last]}]->(:Document).
// Three statements with the same parameters: $remove (ids of documents to delete), $docs
// (list of {id, props (the node's properties), lines: [{unit, lines}]}).
// 1. drops the FROM edges of every document set or removed, and the removed documents
MATCH (d:Document {ws: $ws}) WHERE d.id IN $remove OR d.id IN [x IN $docs | x.id]
CALL (d) {
  MATCH (d)<-[f:FROM]-()
  DELETE f
}
WITH d WHERE d.id IN $remove
DETACH DELETE d;
// 2. the records
UNWIND $docs AS doc
MERGE (d:Document {ws: $ws, id: doc.id})
SET d += doc.props
RETURN count(d) AS documents;
// 3. the FROM edges, from the live unit or else its archived copy (a unit retracted by hand
//    is still stated by its document); a purged unit has neither and gets no edge
UNWIND $docs AS doc
MATCH (d:Document {ws: $ws, id: doc.id})
UNWIND doc.lines AS l
CALL (d, l) {
  OPTIONAL MATCH (u:Unit {ws: $ws, id: l.unit})
  OPTIONAL MATCH (r:RetractedUnit {ws: $ws, id: l.unit})
  WITH d, l, coalesce(u, r) AS x
  WHERE x IS NOT NULL
  CREATE (x)-[:FROM {lines: l.lines}]->(d)
}
RETURN count(*) AS statements
