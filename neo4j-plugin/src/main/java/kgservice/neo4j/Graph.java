package kgservice.neo4j;

import java.util.Comparator;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.NodeCursor;
import org.neo4j.internal.kernel.api.TokenRead;
import org.neo4j.storageengine.api.RelationshipSelection;
import org.neo4j.token.api.TokenConstants;

/** The store's vocabulary as kgservice writes it (cypher/ingest_*.cypher), in one place. */
final class Graph {
    private Graph() {}

    static final Label NODE = Label.label("Node");
    static final Label UNIT = Label.label("Unit");
    static final String LITERAL_PREFIX = "lit:"; // kgservice/ids.py LITERAL_PREFIX
    static final int MAX_CLOSURE_DEPTH = 10; // kgservice/stores/base.py MAX_CLOSURE_DEPTH

    static final RelationshipType SYNONYM = RelationshipType.withName("SYNONYM");
    static final RelationshipType BELONGS_TO = RelationshipType.withName("BELONGS_TO");
    static final RelationshipType OF = RelationshipType.withName("OF");
    static final RelationshipType RELATED_TO = RelationshipType.withName("RELATED_TO");
    static final RelationshipType CONTENT = RelationshipType.withName("CONTENT");
    static final RelationshipType SUPERSEDED = RelationshipType.withName("SUPERSEDED");
    static final RelationshipType NARROWED_BY = RelationshipType.withName("NARROWED_BY");
    static final RelationshipType SUPERSEDED_BY = RelationshipType.withName("SUPERSEDED_BY");
    static final RelationshipType SUBJECT = RelationshipType.withName("SUBJECT");
    static final RelationshipType ARG = RelationshipType.withName("ARG");
    static final RelationshipType MOD = RelationshipType.withName("MOD");

    /** Spreading kinds in alphabetical order (the order the embedded store adds them in). */
    static final String[] SPREAD_KINDS = {"belongs_to", "content", "of", "related_to", "synonym"};
    static final RelationshipType[] SPREAD_TYPES = {BELONGS_TO, CONTENT, OF, RELATED_TO, SYNONYM};
    /** Content flows cause -> effect only; the other kinds both ways. */
    static final Direction[] SPREAD_DIRS = {Direction.BOTH, Direction.OUTGOING, Direction.BOTH, Direction.BOTH, Direction.BOTH};

    /** The token id of each spreading type (SPREAD_TYPES order); NO_TOKEN for a type no
     *  relationship was ever created with. */
    static int[] spreadTypeIds(TokenRead tokens) {
        int[] ids = new int[SPREAD_TYPES.length];
        for (int k = 0; k < ids.length; k++) {
            ids[k] = tokens.relationshipType(SPREAD_TYPES[k].name());
        }
        return ids;
    }

    /** The kernel selection of each spreading kind in its direction (SPREAD_DIRS); null for a
     *  type that does not exist yet (nothing to walk). */
    static RelationshipSelection[] spreadSelections(int[] typeIds) {
        RelationshipSelection[] select = new RelationshipSelection[typeIds.length];
        for (int k = 0; k < typeIds.length; k++) {
            select[k] = typeIds[k] == TokenConstants.NO_TOKEN ? null
                    : RelationshipSelection.selection(typeIds[k], SPREAD_DIRS[k]);
        }
        return select;
    }

    /** The stored degree over the five spreading kinds, either direction, retired edges
     *  included (cypher/spread_step.cypher; EmbeddedStore._spread_degree): what max_fanout
     *  compares against, on both spread engines. */
    static int spreadDegree(NodeCursor node, int[] typeIds) {
        int d = 0;
        for (int type : typeIds) {
            if (type != TokenConstants.NO_TOKEN) {
                d += node.degree(RelationshipSelection.selection(type, Direction.OUTGOING))
                        + node.degree(RelationshipSelection.selection(type, Direction.INCOMING));
            }
        }
        return d;
    }

    /** Python's str ordering (by code point), which Java's UTF-16 compareTo differs from
     *  above the BMP; results are ordered as the library orders them. */
    static final Comparator<String> CODEPOINT_ORDER = (a, b) -> {
        int i = 0, j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i), cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    };

    static boolean live(Relationship r) {
        return Boolean.TRUE.equals(r.getProperty("live", null));
    }

    static String id(Node n) {
        return (String) n.getProperty("id", null);
    }

    /** The workspace of the procedure call running on this thread (docs/workspaces.md): every
     *  procedure sets it from its `ws` argument before it reads anything, and every lookup by id
     *  is a lookup by (ws, id), the identity the store's constraints keep unique. */
    static final ThreadLocal<String> WS = ThreadLocal.withInitial(() -> "default");

    static String ws(String given) {
        String ws = given == null || given.isEmpty() ? "default" : given;
        WS.set(ws);
        return ws;
    }

    static Node node(Transaction tx, String id) {
        return id == null ? null : find(tx, NODE, "id", id);
    }

    static Node unit(Transaction tx, String id) {
        return id == null ? null : find(tx, UNIT, "id", id);
    }

    /** The one node of {@code label} in this call's workspace whose {@code key} is {@code value}. */
    static Node find(Transaction tx, Label label, String key, Object value) {
        try (var it = tx.findNodes(label, java.util.Map.of("ws", WS.get(), key, value))) {
            return it.hasNext() ? it.next() : null;
        }
    }
}
