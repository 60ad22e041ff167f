package kgservice.neo4j;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Directed expansion (DESIGN §4.3), step for step as kgservice/expansion/directed.py
 * composes the procedures: superseded seed -> newest node, ≡ merge, subject and context
 * mentions, belongs-to closure with ancestors' synonyms, narrowed_by / narrows, and
 * superseded units replaced by their terminal units. Reasons read exactly as the library's.
 */
final class Directed {
    final Map<String, List<String>> nodes = new LinkedHashMap<>();
    final Map<String, List<String>> units = new LinkedHashMap<>();
    final Map<String, List<String>> superseded = new LinkedHashMap<>();

    private static void add(Map<String, List<String>> table, String id, String why) {
        List<String> reasons = table.computeIfAbsent(id, k -> new ArrayList<>());
        if (!reasons.contains(why)) {
            reasons.add(why);
        }
    }

    /** Units that sink to {@code node} through belongs-to: its ancestors' facts and their synonyms'
     *  (directed.py: _sunk); {@code via} marks a base's inherited facts. */
    private static void sunk(Closures c, Directed res, List<String[]> raw, String node, String via) {
        List<Map.Entry<String, Integer>> ancestors = new ArrayList<>(c.belongsToAncestors(node).entrySet());
        ancestors.sort(Map.Entry.<String, Integer>comparingByValue()
                .thenComparing(Map.Entry.comparingByKey(Graph.CODEPOINT_ORDER)));
        for (var a : ancestors) {
            String anc = a.getKey();
            add(res.nodes, anc, "ancestor of " + node + (via.isEmpty() ? "" : " (base)") + " (depth " + a.getValue() + ")");
            for (String syn : c.synonymClass(anc)) {
                if (!syn.equals(anc)) {
                    add(res.nodes, syn, "synonym of " + anc);
                }
                for (String u : c.subjectMentions(syn)) {
                    raw.add(new String[] {u, "inherited from " + syn + via});
                }
            }
        }
    }

    static Directed expand(Closures c, List<String> seeds) {
        Directed res = new Directed();
        List<String[]> raw = new ArrayList<>(); // (unit id, reason) before supersession is resolved
        for (String seed : seeds) {
            add(res.nodes, seed, "seed");
            List<String> focus = new ArrayList<>(List.of(seed));
            for (String end : c.nodeSupersededEnd(seed)) {
                if (!end.equals(seed)) {
                    add(res.nodes, end, "replaces " + seed);
                    focus.add(end);
                }
            }
            List<String> members = new ArrayList<>();
            for (String f : focus) {
                for (String m : c.synonymClass(f)) {
                    if (!members.contains(m)) {
                        members.add(m);
                        if (!m.equals(f)) {
                            add(res.nodes, m, "synonym of " + f);
                        }
                    }
                }
            }
            for (String m : members) {
                for (String u : c.subjectMentions(m)) {
                    raw.add(new String[] {u, "subject of " + m});
                }
                for (String u : c.contextMentions(m)) {
                    raw.add(new String[] {u, "mentions " + m});
                }
                sunk(c, res, raw, m, "");
                for (String d : c.narrowedBy(m)) {
                    add(res.nodes, d, "narrows " + m);
                }
                // a derived node inherits the facts of the base it narrows, including the facts
                // the base inherits through belongs-to (kgservice/expansion/directed.py)
                for (String base : c.narrows(m)) {
                    add(res.nodes, base, "base of " + m);
                    for (String u : c.subjectMentions(base)) {
                        raw.add(new String[] {u, "inherited from base " + base});
                    }
                    sunk(c, res, raw, base, " via base " + base);
                }
            }
        }
        TreeSet<String> unitIds = new TreeSet<>(Graph.CODEPOINT_ORDER);
        raw.forEach(r -> unitIds.add(r[0]));
        Map<String, List<String>> ends = c.supersededEnd(new ArrayList<>(unitIds));
        for (String[] r : raw) {
            List<String> terminals = ends.getOrDefault(r[0], List.of(r[0]));
            if (terminals.equals(List.of(r[0]))) {
                add(res.units, r[0], r[1]);
                continue;
            }
            res.superseded.put(r[0], terminals);
            for (String t : terminals) {
                add(res.units, t, "supersedes #" + r[0] + " (" + r[1] + ")");
            }
        }
        return res;
    }
}
