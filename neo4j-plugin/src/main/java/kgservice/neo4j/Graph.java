package kgservice.neo4j;

import java.util.Comparator;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.Transaction;

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

    static Node node(Transaction tx, String id) {
        return id == null ? null : tx.findNode(NODE, "id", id);
    }

    static Node unit(Transaction tx, String id) {
        return id == null ? null : tx.findNode(UNIT, "id", id);
    }
}
