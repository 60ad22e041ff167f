package kgservice.neo4j;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.Transaction;

/**
 * Causal chains as kgservice/expansion/causal.py walks them, so kg.causalChain in the Browser
 * lists what `kg expand NODE --mode causal` prints: from the seed, the live CONTENT edges of one
 * family (导致) downstream, hop by hop; a node replaced by a newer node continues from its
 * replacement, a node's ≡ class counts as the node, paths never revisit a node, and an effect
 * stated as a value (a literal node, id "lit:…") ends its chain: it is a hop, and nothing leaves
 * it. Maximal paths, longest first, then by their (src, dst, unit) hops.
 */
final class CausalChains {
    static final String CAUSAL_FAMILY = "导致";
    static final int MAX_CHAINS = 200;
    // a unit's JSON holds this only for the field: a quote inside a string value is escaped
    static final String INVERSE = "\"inverse\":true";

    record Hop(String src, String dst, String unit) {
    }

    record Result(List<List<Hop>> chains, boolean truncated) {
    }

    private record Path(List<Hop> hops, Set<String> seen, String end) {
    }

    private final Transaction tx;
    private final Closures closures;
    private final Map<String, List<String>> aliasCache = new HashMap<>();

    CausalChains(Transaction tx) {
        this.tx = tx;
        this.closures = new Closures(tx);
    }

    private List<String> aliases(String node) {
        if (node.startsWith(Graph.LITERAL_PREFIX)) {
            return List.of(); // a value ends its chain: nothing leaves it, nothing else is it
        }
        return aliasCache.computeIfAbsent(node, n -> {
            List<String> focus = new ArrayList<>();
            focus.add(n);
            for (String e : closures.nodeSupersededEnd(n)) {
                if (!e.equals(n)) {
                    focus.add(e);
                }
            }
            List<String> out = new ArrayList<>();
            for (String f : focus) {
                for (String m : closures.synonymClass(f)) {
                    if (!out.contains(m)) {
                        out.add(m);
                    }
                }
            }
            return out;
        });
    }

    /** One hop: (src -> [(dst, unit)]) over live CONTENT edges of the family, sorted like causal_step.cypher. */
    private Map<String, List<String[]>> step(TreeSet<String> sources, String family) {
        Map<String, List<String[]>> edges = new LinkedHashMap<>();
        for (String src : sources) {
            Node n = Graph.node(tx, src);
            if (n == null) {
                continue;
            }
            TreeSet<String[]> rows = new TreeSet<>((a, b) -> {
                int c = Graph.CODEPOINT_ORDER.compare(a[0], b[0]);
                return c != 0 ? c : Graph.CODEPOINT_ORDER.compare(a[1], b[1]);
            });
            try (var rels = n.getRelationships(Direction.OUTGOING, Graph.CONTENT)) {
                for (Relationship r : rels) {
                    Node m = r.getEndNode();
                    if (Graph.live(r) && family.equals(r.getProperty("family", null))) {
                        rows.add(new String[] {Graph.id(m), (String) r.getProperty("unit", null)});
                    }
                }
            }
            // an effect stated as a value has no edge: the node's own live units of the family
            // (not inverse ones, whose subject is the effect) with a literal argument, as causal_step.cypher
            try (var subj = n.getRelationships(Direction.INCOMING, Graph.SUBJECT)) {
                for (Relationship s : subj) {
                    Node u = s.getStartNode();
                    if (!u.hasLabel(Graph.UNIT) || !family.equals(u.getProperty("family", null))
                            || String.valueOf(u.getProperty("json", "")).contains(INVERSE)) {
                        continue;
                    }
                    try (var sup = u.getRelationships(Direction.OUTGOING, Graph.SUPERSEDED_BY)) {
                        if (sup.iterator().hasNext()) {
                            continue;
                        }
                    }
                    try (var args = u.getRelationships(Direction.OUTGOING, Graph.ARG)) {
                        for (Relationship a : args) {
                            Node m = a.getEndNode();
                            if ("literal".equals(m.getProperty("kind", null))) {
                                rows.add(new String[] {Graph.id(m), (String) u.getProperty("id", null)});
                            }
                        }
                    }
                }
            }
            if (!rows.isEmpty()) {
                edges.put(src, new ArrayList<>(rows));
            }
        }
        return edges;
    }

    Result walk(String seed, int maxHops, String family) {
        if (maxHops < 1 || maxHops > 10) {
            throw new IllegalArgumentException("maxHops must be 1..10, got " + maxHops);
        }
        List<List<Hop>> chains = new ArrayList<>();
        boolean truncated = false;
        List<Path> frontier = List.of(new Path(List.of(), new HashSet<>(aliases(seed)), seed));
        for (int hop = 0; hop < maxHops; hop++) {
            TreeSet<String> sources = new TreeSet<>(Graph.CODEPOINT_ORDER);
            for (Path p : frontier) {
                sources.addAll(aliases(p.end()));
            }
            Map<String, List<String[]>> edges = step(sources, family);
            List<Path> next = new ArrayList<>();
            for (Path p : frontier) {
                boolean grew = false;
                for (String a : aliases(p.end())) {
                    for (String[] e : edges.getOrDefault(a, List.of())) {
                        if (p.seen().contains(e[0])) {
                            continue;
                        }
                        grew = true;
                        List<Hop> hops = new ArrayList<>(p.hops());
                        hops.add(new Hop(a, e[0], e[1]));
                        Set<String> seen = new HashSet<>(p.seen());
                        seen.add(e[0]);
                        seen.addAll(aliases(e[0]));
                        next.add(new Path(hops, seen, e[0]));
                    }
                }
                if (!grew && !p.hops().isEmpty()) {
                    chains.add(p.hops());
                }
            }
            if (next.size() > MAX_CHAINS) {
                next = new ArrayList<>(next.subList(0, MAX_CHAINS));
                truncated = true;
            }
            frontier = next;
            if (frontier.isEmpty()) {
                break;
            }
        }
        for (Path p : frontier) {
            if (!p.hops().isEmpty()) {
                chains.add(p.hops());
            }
        }
        chains.sort((x, y) -> {
            if (x.size() != y.size()) {
                return Integer.compare(y.size(), x.size());
            }
            for (int i = 0; i < x.size(); i++) {
                Hop a = x.get(i);
                Hop b = y.get(i);
                int c = Graph.CODEPOINT_ORDER.compare(a.src(), b.src());
                c = c != 0 ? c : Graph.CODEPOINT_ORDER.compare(a.dst(), b.dst());
                c = c != 0 ? c : Graph.CODEPOINT_ORDER.compare(a.unit(), b.unit());
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        });
        return new Result(chains, truncated);
    }
}
