package kgservice.neo4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.kernel.api.procedure.GlobalProcedures;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * The kg.* procedures inside an in-process Neo4j (the embedded database of the `neo4j` artifact
 * the plugin compiles against, procedures registered as the server registers a plugin's), on a graph written in the store's model
 * (Node {id, kind}, relations {family, unit, live}); expectations worked out by hand.
 */
class ProceduresTest {
    private static final String FIXTURE = String.join("\n",
            "CREATE (d:Node {ws: 'default', id: 'drought', kind: 'entry'}), (c:Node {ws: 'default', id: 'crop failure', kind: 'entry'}),",
            "       (f:Node {ws: 'default', id: 'famine', kind: 'entry'}), (m:Node {ws: 'default', id: 'migration', kind: 'entry'}),",
            "       (g:Node {ws: 'default', id: '干旱', kind: 'entry'}), (dust:Node {ws: 'default', id: 'lit:dust', kind: 'literal'}),",
            "       (d)-[:CONTENT {family: '导致', unit: 'c1', live: true}]->(c),",
            "       (c)-[:CONTENT {family: '导致', unit: 'c2', live: false}]->(f),",
            "       (c)-[:CONTENT {family: '导致', unit: 'c3', live: true}]->(m),",
            "       (m)-[:CONTENT {family: '导致', unit: 'c4', live: true}]->(d),",
            "       (d)-[:CONTENT {family: '导致', unit: 'c5', live: true}]->(dust),",
            "       (g)-[:SYNONYM {family: '同义', unit: 's1', live: true}]->(d),",
            // units whose effect is a value have no edge to it (the store writes none; the c5 edge
            // above checks that spreading skips one anyway): {crop failure} [causes] (hunger) is
            // read off the unit; {drought} [caused by] (heat) is inverse (its subject is the effect)
            "       (c5:Unit {ws: 'default', id: 'c5', family: '导致', json: '{\"id\":\"c5\",\"inverse\":false}'}),",
            "       (c5)-[:SUBJECT]->(d), (c5)-[:ARG {pos: 0}]->(dust),",
            "       (hunger:Node {ws: 'default', id: 'lit:hunger', kind: 'literal'}),",
            "       (c8:Unit {ws: 'default', id: 'c8', family: '导致', json: '{\"id\":\"c8\",\"inverse\":false}'}),",
            "       (c8)-[:SUBJECT]->(c), (c8)-[:ARG {pos: 0}]->(hunger),",
            "       (heat:Node {ws: 'default', id: 'lit:heat', kind: 'literal'}),",
            "       (c6:Unit {ws: 'default', id: 'c6', family: '导致', json: '{\"id\":\"c6\",\"inverse\":true}'}),",
            "       (c6)-[:SUBJECT]->(d), (c6)-[:ARG {pos: 0}]->(heat),",
            // another workspace with a node of the same id: never seen from 'default'
            "       (od:Node {ws: 'other', id: 'drought', kind: 'entry'}), (ox:Node {ws: 'other', id: 'flood', kind: 'entry'}),",
            "       (od)-[:CONTENT {family: '导致', unit: 'o1', live: true}]->(ox)");

    private static DatabaseManagementService dbms;
    private static GraphDatabaseService db;

    @BeforeAll
    static void start() throws Exception {
        Path home = Files.createTempDirectory("kg-plugin-test");
        dbms = new DatabaseManagementServiceBuilder(home).build();
        db = dbms.database("neo4j");
        GlobalProcedures procs = ((GraphDatabaseAPI) db).getDependencyResolver().resolveDependency(GlobalProcedures.class);
        procs.registerProcedure(ClosureProcedures.class);
        procs.registerProcedure(SpreadProcedures.class);
        try (var tx = db.beginTx()) {
            tx.execute(FIXTURE).close();
            tx.commit();
        }
    }

    @AfterAll
    static void stop() {
        dbms.shutdown();
    }

    private static List<Map<String, Object>> rows(String query) {
        try (var tx = db.beginTx(); var r = tx.execute(query)) {
            return r.stream().collect(Collectors.toList());
        }
    }

    @Test
    void nodeIdsNormaliseAsThePythonLibrary() {
        assertEquals("lung cancer", NodeIds.nodeId("  Lung \t CANCER "));
        assertEquals("python 3", NodeIds.nodeId("Ｐｙｔｈｏｎ　３"));
        assertEquals("strasse", NodeIds.nodeId("Straße"));
        assertEquals("ent:lit:high", NodeIds.nodeId("lit:high"));
    }

    @Test
    void aLabelNamesItsNode() {
        assertEquals(List.of(Map.of("node", "drought"), Map.of("node", "干旱")),
                rows("CALL kg.synonymClass('DROUGHT')"));
        assertEquals(List.of(Map.of("node", "No Such")), rows("CALL kg.synonymClass('No Such')"));
    }

    @Test
    void causalChainFollowsLiveEdgesSynonymsAndStopsOnACycle() {
        // 干旱 ≡ drought -c1-> crop failure -c3-> migration; c2 is retired, migration -c4-> drought
        // would revisit the seed; c8's and c5's effects are values, (hunger) and (dust): chains end
        // there (c6's value is its cause). Longest first, then by hops: 'lit:hunger' < 'migration'
        var r = rows("CALL kg.causalChain('干旱') YIELD nodes, units, end RETURN nodes, units, end");
        assertEquals(List.of(
                Map.of("nodes", List.of("drought", "crop failure", "lit:hunger"), "units", List.of("c1", "c8"),
                        "end", "lit:hunger"),
                Map.of("nodes", List.of("drought", "crop failure", "migration"), "units", List.of("c1", "c3"),
                        "end", "migration"),
                Map.of("nodes", List.of("drought", "lit:dust"), "units", List.of("c5"), "end", "lit:dust")), r);
        var one = rows("CALL kg.causalChain('Drought', 1) YIELD units RETURN units");
        assertEquals(List.of(Map.of("units", List.of("c1")), Map.of("units", List.of("c5"))), one);
    }

    @Test
    void spreadOneHopCarriesEnergyTimesTau() {
        // drought fires once (K = 1) along its live spreading rows: content c1 forward and the
        // synonym s1 (either way); with δ = 0 each carries 1.0 * τ(kind). The literal (dust) of
        // c5 is no spreading target, as in the library
        Map<String, Object> tau = Map.of("content", 0.5, "synonym", 0.9);
        try (var tx = db.beginTx(); var r = tx.execute(
                "CALL kg.spread({Drought: 1.0}, $tau, 0.05, 1, 0, 0, 0.0, true, 0, 'walk')",
                Map.of("tau", tau))) {
            Map<String, Object> got = r.stream().collect(Collectors.toMap(m -> (String) m.get("node"),
                    m -> m.get("energy")));
            assertEquals(Map.of("drought", 1.0, "crop failure", 0.5, "干旱", 0.9), got);
        }
    }

    @Test
    void eachWorkspaceSpreadsOverItsOwnNodes() {
        // the same seed id in two workspaces: each call reads its own (default when none is given),
        // on both engines (the resident graph is one per workspace)
        for (String engine : List.of("walk", "resident")) {
            String call = "CALL kg.spread({Drought: 1.0}, {content: 0.5, synonym: 0.9}, 0.05, 1, 0, 0, 0.0, true, 0, '"
                    + engine + "'";
            assertEquals(Map.of("drought", 1.0, "crop failure", 0.5, "干旱", 0.9), energies(call + ")"));
            assertEquals(Map.of("drought", 1.0, "crop failure", 0.5, "干旱", 0.9), energies(call + ", 'default')"));
            assertEquals(Map.of("drought", 1.0, "flood", 0.5), energies(call + ", 'other')"));
        }
        assertEquals(List.of(Map.of("node", "drought")), rows("CALL kg.synonymClass('drought', 'other')"));
    }

    private static Map<String, Object> energies(String query) {
        return rows(query).stream().collect(Collectors.toMap(m -> (String) m.get("node"), m -> m.get("energy")));
    }

    @Test
    void spreadDefaultsAreTheLexiconsAsTheServicesAre() {
        // the seeds alone: δ and backflow from the lexicon's spread block (0.5, false), as
        // KnowledgeBase.spread_params() takes them. Drought's two rows (c1, s1) each carry
        // 1 / 2^0.5 * τ; with backflow off the seed keeps its 1.0
        var got = energies("CALL kg.spread({Drought: 1.0}, {content: 0.5, synonym: 0.9}, 0.05, 1)");
        double share = 1.0 / Math.sqrt(2.0);
        assertEquals(Map.of("drought", 1.0, "crop failure", 0.5 * share, "干旱", 0.9 * share), got);
        assertEquals(got, energies("CALL kg.spread({Drought: 1.0}, {content: 0.5, synonym: 0.9}, 0.05, 1, 0, 0, 0.5, false)"));
        assertEquals(Map.of("drought", 1.0, "crop failure", 0.5, "干旱", 0.9),
                energies("CALL kg.spread({Drought: 1.0}, {content: 0.5, synonym: 0.9}, 0.05, 1, 0, 0, 0.0)"));
    }
}
