package kgservice.neo4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.ExecutionPlanDescription;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * A workspace's own relationship counts (the resident graph's check when another workspace's
 * edges moved) and its resident graph's build read that workspace's nodes only: the work of
 * the count query for a 3-node workspace is the same whether the database holds 1,000 nodes of
 * another workspace or none, and its build looks at its 3 nodes. Counts worked out by hand;
 * the store's (ws, id) uniqueness constraint as kgservice makes it.
 */
class WorkspaceCountsTest {
    private static DatabaseManagementService dbms;
    private static GraphDatabaseService db;

    @BeforeAll
    static void start() throws Exception {
        dbms = new DatabaseManagementServiceBuilder(Files.createTempDirectory("kg-ws-counts")).build();
        db = dbms.database("neo4j");
        run("CREATE CONSTRAINT node_ws_id IF NOT EXISTS FOR (n:Node) REQUIRE (n.ws, n.id) IS UNIQUE");
        // workspace a: x -RELATED_TO-> y, x -OF-> z, y -OF-> z
        run("CREATE (x:Node {ws: 'a', id: 'x'}), (y:Node {ws: 'a', id: 'y'}), (z:Node {ws: 'a', id: 'z'}), "
                + "(x)-[:RELATED_TO {live: true}]->(y), (x)-[:OF {live: true}]->(z), (y)-[:OF {live: true}]->(z)");
    }

    @AfterAll
    static void stop() {
        dbms.shutdown();
    }

    private static void run(String q) {
        try (var tx = db.beginTx()) {
            tx.execute(q).close();
            tx.commit();
        }
    }

    private static long[] counts(String ws) {
        try (var tx = db.beginTx()) {
            return ResidentGraph.wsCounts(tx, ws);
        }
    }

    private static long dbHits(String ws) {
        try (var tx = db.beginTx(); var r = tx.execute("PROFILE " + ResidentGraph.WS_COUNTS, Map.of("ws", ws))) {
            r.resultAsString();
            return hits(r.getExecutionPlanDescription());
        }
    }

    private static long hits(ExecutionPlanDescription p) {
        long h = p.hasProfilerStatistics() ? p.getProfilerStatistics().getDbHits() : 0;
        for (ExecutionPlanDescription c : p.getChildren()) {
            h += hits(c);
        }
        return h;
    }

    @Test
    void aWorkspacesCountsReadItsOwnNodesOnly() {
        // BELONGS_TO, CONTENT, OF, RELATED_TO, SYNONYM
        assertArrayEquals(new long[] {0, 0, 2, 1, 0}, counts("a"));
        long alone = dbHits("a");
        // workspace b: 1,000 nodes in a ring of RELATED_TO edges
        run("UNWIND range(0, 999) AS i CREATE (:Node {ws: 'b', id: 'b' + toString(i)})");
        run("UNWIND range(0, 999) AS i MATCH (p:Node {ws: 'b', id: 'b' + toString(i)}), "
                + "(q:Node {ws: 'b', id: 'b' + toString((i + 1) % 1000)}) CREATE (p)-[:RELATED_TO {live: true}]->(q)");
        assertArrayEquals(new long[] {0, 0, 2, 1, 0}, counts("a"));
        assertArrayEquals(new long[] {0, 0, 0, 1000, 0}, counts("b"));
        assertEquals(alone, dbHits("a")); // a label scan reads b's 1,000 nodes too
    }

    @Test
    void aWorkspacesGraphIsBuiltFromItsOwnNodes() {
        run("UNWIND range(0, 999) AS i CREATE (:Node {ws: 'c', id: 'c' + toString(i)})");
        try (var tx = db.beginTx()) {
            ResidentGraph a = ResidentGraph.build(tx, "a");
            assertEquals(3, a.n);
            assertEquals("x", a.id(0)); // ids in code-point order: x, y, z
            assertEquals(3, a.visited); // a scan of every node looks at the other workspaces' 1,000+ too
            // OF and RELATED_TO spread both ways: x {z, y}, y {x, z}, z {x, y}
            assertEquals(6, a.rows());
            ResidentGraph c = ResidentGraph.build(tx, "c");
            assertEquals(1000, c.n);
            assertEquals(1000, c.visited);
        }
    }
}
