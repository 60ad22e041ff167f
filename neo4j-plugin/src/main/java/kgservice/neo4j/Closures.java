package kgservice.neo4j;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.Transaction;

/**
 * The store procedures directed expansion composes (kgservice/stores/base.py GraphStore),
 * walked over the Core API with the embedded store's semantics: live edges only, closures
 * bounded at MAX_CLOSURE_DEPTH hops, a node that is not stored answers with itself / nothing.
 * Every list comes back sorted (Python's string order).
 */
final class Closures {
    private final Transaction tx;

    Closures(Transaction tx) {
        this.tx = tx;
    }

    private static TreeSet<String> sorted() {
        return new TreeSet<>(Graph.CODEPOINT_ORDER);
    }

    /** Live neighbours over one relationship type, as (id -> Node). */
    private static Map<String, Node> neighbours(Node n, RelationshipType type, Direction dir) {
        Map<String, Node> out = new LinkedHashMap<>();
        try (var rels = n.getRelationships(dir, type)) {
            for (Relationship r : rels) {
                if (Graph.live(r)) {
                    Node m = r.getOtherNode(n);
                    out.putIfAbsent(Graph.id(m), m);
                }
            }
        }
        return out;
    }

    /** The ≡ class: breadth-first over live SYNONYM edges, either direction, <= 10 hops. */
    List<String> synonymClass(String id) {
        Node start = Graph.node(tx, id);
        TreeSet<String> seen = sorted();
        seen.add(id);
        if (start == null) {
            return new ArrayList<>(seen);
        }
        List<Node> frontier = List.of(start);
        for (int depth = 0; depth < Graph.MAX_CLOSURE_DEPTH && !frontier.isEmpty(); depth++) {
            List<Node> next = new ArrayList<>();
            for (Node n : frontier) {
                for (var e : neighbours(n, Graph.SYNONYM, Direction.BOTH).entrySet()) {
                    if (seen.add(e.getKey())) {
                        next.add(e.getValue());
                    }
                }
            }
            frontier = next;
        }
        return new ArrayList<>(seen);
    }

    /** Transitive live belongs-to ancestors with their shortest depth (<= 10), ordered by depth, id. */
    Map<String, Integer> belongsToAncestors(String id) {
        Map<String, Integer> depth = new LinkedHashMap<>();
        Node start = Graph.node(tx, id);
        if (start == null) {
            return depth;
        }
        List<Node> frontier = List.of(start);
        for (int d = 1; d <= Graph.MAX_CLOSURE_DEPTH && !frontier.isEmpty(); d++) {
            Map<String, Node> parents = new java.util.TreeMap<>(Graph.CODEPOINT_ORDER);
            for (Node n : frontier) {
                parents.putAll(neighbours(n, Graph.BELONGS_TO, Direction.OUTGOING));
            }
            List<Node> next = new ArrayList<>();
            for (var e : parents.entrySet()) {
                if (!depth.containsKey(e.getKey()) && !e.getKey().equals(id)) {
                    depth.put(e.getKey(), d);
                    next.add(e.getValue());
                }
            }
            frontier = next;
        }
        return depth;
    }

    /** Units whose subject is the node. */
    List<String> subjectMentions(String id) {
        return unitsPointingAt(id, Graph.SUBJECT);
    }

    /** Units where the node is an argument or a modifier value. */
    List<String> contextMentions(String id) {
        return unitsPointingAt(id, Graph.ARG, Graph.MOD);
    }

    private List<String> unitsPointingAt(String id, RelationshipType... types) {
        Node n = Graph.node(tx, id);
        TreeSet<String> out = sorted();
        if (n != null) {
            try (var rels = n.getRelationships(Direction.INCOMING, types)) {
                for (Relationship r : rels) {
                    Node u = r.getStartNode();
                    if (u.hasLabel(Graph.UNIT)) {
                        out.add(Graph.id(u));
                    }
                }
            }
        }
        return new ArrayList<>(out);
    }

    /** Derived nodes that narrow the base node. */
    List<String> narrowedBy(String id) {
        return live(id, Graph.NARROWED_BY, Direction.OUTGOING);
    }

    /** Base nodes the derived node narrows. */
    List<String> narrows(String id) {
        return live(id, Graph.NARROWED_BY, Direction.INCOMING);
    }

    private List<String> live(String id, RelationshipType type, Direction dir) {
        Node n = Graph.node(tx, id);
        TreeSet<String> out = sorted();
        if (n != null) {
            out.addAll(neighbours(n, type, dir).keySet());
        }
        return new ArrayList<>(out);
    }

    /** Terminal (not superseded) units of each unit's SUPERSEDED_BY chain; [unit] when it is live
     *  or not stored. Not bounded: unit supersession is acyclic by construction. */
    Map<String, List<String>> supersededEnd(List<String> unitIds) {
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (String uid : unitIds) {
            Node u = Graph.unit(tx, uid);
            if (u == null || !u.hasRelationship(Direction.OUTGOING, Graph.SUPERSEDED_BY)) {
                result.put(uid, List.of(uid));
                continue;
            }
            TreeSet<String> ends = sorted();
            Set<Long> seen = new HashSet<>();
            seen.add(u.getId());
            ArrayDeque<Node> todo = new ArrayDeque<>();
            todo.push(u);
            while (!todo.isEmpty()) {
                Node x = todo.pop();
                boolean any = false;
                try (var rels = x.getRelationships(Direction.OUTGOING, Graph.SUPERSEDED_BY)) {
                    for (Relationship r : rels) {
                        any = true;
                        Node v = r.getEndNode();
                        if (seen.add(v.getId())) {
                            todo.push(v);
                        }
                    }
                }
                if (!any) {
                    ends.add(Graph.id(x));
                }
            }
            result.put(uid, new ArrayList<>(ends));
        }
        return result;
    }

    /** Terminal nodes of a node-level supersession chain over live SUPERSEDED edges (<= 10 hops);
     *  the node itself when nothing replaces it (or the replacements form a cycle). */
    List<String> nodeSupersededEnd(String id) {
        Node start = Graph.node(tx, id);
        if (start == null || !start.hasRelationship(Direction.OUTGOING, Graph.SUPERSEDED)) {
            return List.of(id);
        }
        TreeSet<String> ends = sorted();
        Set<String> seen = new HashSet<>();
        seen.add(id);
        List<Node> frontier = List.of(start);
        for (int depth = 0; depth < Graph.MAX_CLOSURE_DEPTH && !frontier.isEmpty(); depth++) {
            List<Node> next = new ArrayList<>();
            for (Node n : frontier) {
                for (var e : neighbours(n, Graph.SUPERSEDED, Direction.OUTGOING).entrySet()) {
                    if (neighbours(e.getValue(), Graph.SUPERSEDED, Direction.OUTGOING).isEmpty()) {
                        ends.add(e.getKey());
                    }
                    if (seen.add(e.getKey())) {
                        next.add(e.getValue());
                    }
                }
            }
            frontier = next;
        }
        return ends.isEmpty() ? List.of(id) : new ArrayList<>(ends);
    }
}
