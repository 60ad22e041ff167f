package kgservice.neo4j;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.NodeCursor;
import org.neo4j.internal.kernel.api.PropertyCursor;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.RelationshipTraversalCursor;
import org.neo4j.storageengine.api.PropertySelection;
import org.neo4j.storageengine.api.RelationshipSelection;
import org.neo4j.values.storable.BooleanValue;
import org.neo4j.values.storable.TextValue;

/**
 * Spreading activation (DESIGN §4.3) run inside Neo4j: every hop of
 * kgservice/expansion/spread.py:spread_activation over the Core API, in one call.
 *
 * Energies equal the embedded store's bit for bit: each frontier node (in id order) passes
 * e * tau[kind] / max(1, d)^damping once per distinct (neighbour, kind), kinds in alphabetical
 * order, so every neighbour's sum is added in the same order as EmbeddedStore.spread_step.
 * Nodes are keyed by their internal id and their string id is read once, when first touched
 * (it decides "never into literals" and is what the caller gets back). The walk uses the
 * kernel's cursors (node, relationship traversal, property) rather than Core API entities:
 * no object per relationship, the `live` flag read through a reused property cursor.
 */
final class SpreadEngine {
    /** Parameters as kgservice.expansion.SpreadParams (e0 already applied to the seed weights). */
    record Params(double[] tau, double epsilon, int maxHops, Integer maxFanout, Integer maxFire,
                  double degreeDamping, boolean seedBackflow) {}

    /** The result: activated nodes' total energies (all of them, or the most energetic when the
     *  caller asked for a limit), the hops run, and how many nodes were activated in all. */
    record Result(Map<String, Double> energy, int hops, int activated, String engine) {}

    private final Transaction tx;
    private final LongIntMap slotOf = new LongIntMap(4096);
    private long[] nodes = new long[1024];
    private String[] ids = new String[1024];
    private double[] energy = new double[1024];
    private double[] incoming = new double[1024];
    private int[] stamp = new int[1024];
    private byte[] flags = new byte[1024];
    private int count;
    private int currentStamp;

    private static final byte LITERAL = 1, SEED = 2, ACTIVE = 4, TOUCHED = Touched.BIT;

    // kernel access, set up in run()
    private Read read;
    private NodeCursor idNode;
    private PropertyCursor idProps;
    private int idKey;

    SpreadEngine(Transaction tx) {
        this.tx = tx;
    }

    private int slot(long ref) {
        int s = slotOf.get(ref);
        if (s >= 0) {
            return s;
        }
        if (count == ids.length) {
            int cap = count * 2;
            nodes = Arrays.copyOf(nodes, cap);
            ids = Arrays.copyOf(ids, cap);
            energy = Arrays.copyOf(energy, cap);
            incoming = Arrays.copyOf(incoming, cap);
            stamp = Arrays.copyOf(stamp, cap);
            flags = Arrays.copyOf(flags, cap);
        }
        s = count++;
        slotOf.put(ref, s);
        nodes[s] = ref;
        String id = null;
        read.singleNode(ref, idNode);
        if (idNode.next()) {
            idNode.properties(idProps, PropertySelection.selection(idKey));
            if (idProps.next() && idProps.propertyValue() instanceof TextValue text) {
                id = text.stringValue();
            }
        }
        ids[s] = id;
        if (id == null || id.startsWith(Graph.LITERAL_PREFIX)) {
            flags[s] |= LITERAL;
        }
        return s;
    }

    Result run(Map<String, Double> seeds, Params p) {
        KernelReads k = new KernelReads(tx);
        read = k.read;
        idKey = k.idKey;
        try (NodeCursor nc = k.nodeCursor();
             RelationshipTraversalCursor rc = k.relationshipCursor();
             PropertyCursor liveProps = k.propertyCursor();
             NodeCursor idNodeCursor = k.nodeCursor();
             PropertyCursor idPropCursor = k.propertyCursor()) {
            idNode = idNodeCursor;
            idProps = idPropCursor;
            return walk(seeds, p, nc, rc, liveProps, k.liveKey, k.typeIds);
        } finally {
            idNode = null;
            idProps = null;
        }
    }

    private Result walk(Map<String, Double> seeds, Params p, NodeCursor nc, RelationshipTraversalCursor rc,
                        PropertyCursor liveProps, int liveKey, int[] typeIds) {
        PropertySelection liveSel = PropertySelection.selection(liveKey);
        RelationshipSelection[] select = Graph.spreadSelections(typeIds);
        Map<String, Double> unknown = new LinkedHashMap<>();
        int[] frontier = new int[16];
        double[] frontierE = new double[16];
        int frontierSize = 0;
        boolean unknownInFrontier = false;
        for (Map.Entry<String, Double> seed : seeds.entrySet()) {
            double e = seed.getValue();
            Node node = Graph.node(tx, seed.getKey());
            if (node == null) {
                unknown.put(seed.getKey(), e); // in the result, spreads nothing (as on the embedded store)
                unknownInFrontier |= e >= p.epsilon();
                continue;
            }
            int s = slot(node.getId());
            energy[s] = e;
            flags[s] |= SEED | ACTIVE;
            if (e >= p.epsilon()) {
                if (frontierSize == frontier.length) {
                    frontier = Arrays.copyOf(frontier, frontierSize * 2);
                    frontierE = Arrays.copyOf(frontierE, frontierSize * 2);
                }
                frontier[frontierSize] = s;
                frontierE[frontierSize++] = e;
            }
        }
        double[] tau = p.tau();
        int[] rowSlot = new int[64];
        double[] rowTau = new double[64];
        Touched touched = new Touched(64);
        int hops = 0;
        while ((frontierSize > 0 || (hops == 0 && unknownInFrontier)) && hops < p.maxHops()) {
            hops++;
            boolean limitFanout = p.maxFanout() != null && hops > 1;
            sortById(frontier, frontierE, frontierSize);
            touched.size = 0;
            for (int f = 0; f < frontierSize; f++) {
                int n = frontier[f];
                read.singleNode(nodes[n], nc);
                if (!nc.next()) {
                    continue;
                }
                if (limitFanout && Graph.spreadDegree(nc, typeIds) > p.maxFanout()) {
                    continue;
                }
                int rows = 0;
                for (int k = 0; k < Graph.SPREAD_KINDS.length; k++) {
                    double t = tau[k];
                    if (!(t > 0) || select[k] == null) {
                        continue;
                    }
                    int st = ++currentStamp; // distinct neighbours per (node, kind)
                    nc.relationships(rc, select[k]);
                    while (rc.next()) {
                        // cheap checks first: the edge's `live` flag is a property read, skipped for
                        // neighbours already counted (parallel edges) and ones that never receive
                        int m = slot(rc.otherNodeReference());
                        if (stamp[m] == st || (flags[m] & LITERAL) != 0) {
                            continue;
                        }
                        rc.properties(liveProps, liveSel);
                        if (!(liveProps.next() && liveProps.propertyValue() instanceof BooleanValue live && live.booleanValue())) {
                            continue;
                        }
                        stamp[m] = st;
                        if (rows == rowSlot.length) {
                            rowSlot = Arrays.copyOf(rowSlot, rows * 2);
                            rowTau = Arrays.copyOf(rowTau, rows * 2);
                        }
                        rowSlot[rows] = m;
                        rowTau[rows++] = t;
                    }
                }
                // (e / max(1, d) ** damping) * tau, in the order docs/spreading.md and the embedded store use
                // (an energy right at epsilon must land on the same side of it on every backend)
                double e = frontierE[f];
                double share = Spreading.share(e, rows, p.degreeDamping());
                for (int i = 0; i < rows; i++) {
                    int m = rowSlot[i];
                    // without backflow a row towards a seed counts in d (above) but carries nothing
                    // (docs/spreading.md, step 2)
                    if (!p.seedBackflow() && (flags[m] & SEED) != 0) {
                        continue;
                    }
                    touched.add(flags, incoming, m, share * rowTau[i]);
                }
            }
            // every node that received energy this hop adds it; the strong ones spread next
            frontierSize = 0;
            if (frontier.length < touched.size) {
                frontier = new int[touched.size];
                frontierE = new double[touched.size];
            }
            for (int i = 0; i < touched.size; i++) {
                int m = touched.nodes[i];
                flags[m] &= ~TOUCHED;
                double in = incoming[m];
                energy[m] = ((flags[m] & ACTIVE) != 0 ? energy[m] : 0.0) + in;
                flags[m] |= ACTIVE;
                if (in >= p.epsilon()) {
                    frontier[frontierSize] = m;
                    frontierE[frontierSize++] = in;
                }
            }
            if (p.maxFire() != null && frontierSize > p.maxFire()) {
                frontierSize = topByEnergy(frontier, frontierE, frontierSize, p.maxFire());
            }
        }
        Map<String, Double> out = new LinkedHashMap<>(count + unknown.size());
        for (int s = 0; s < count; s++) {
            if ((flags[s] & ACTIVE) != 0) {
                out.put(ids[s], energy[s]);
            }
        }
        out.putAll(unknown);
        return new Result(out, hops, out.size(), "walk");
    }

    /** The `limit` most energetic of a full result (ties by id), for the store-walking path. */
    static Result top(Result r, int limit) {
        if (r.energy().size() <= limit) {
            return r;
        }
        List<Map.Entry<String, Double>> all = new ArrayList<>(r.energy().entrySet());
        all.sort((a, b) -> {
            int c = Double.compare(b.getValue(), a.getValue());
            return c != 0 ? c : Graph.CODEPOINT_ORDER.compare(a.getKey(), b.getKey());
        });
        Map<String, Double> out = new LinkedHashMap<>();
        for (Map.Entry<String, Double> e : all.subList(0, limit)) {
            out.put(e.getKey(), e.getValue());
        }
        return new Result(out, r.hops(), r.activated(), r.engine());
    }

    private void sortById(int[] slots, double[] es, int size) {
        Integer[] order = new Integer[size];
        for (int i = 0; i < size; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Graph.CODEPOINT_ORDER.compare(ids[slots[a]], ids[slots[b]]));
        int[] s2 = new int[size];
        double[] e2 = new double[size];
        for (int i = 0; i < size; i++) {
            s2[i] = slots[order[i]];
            e2[i] = es[order[i]];
        }
        System.arraycopy(s2, 0, slots, 0, size);
        System.arraycopy(e2, 0, es, 0, size);
    }

    /** max_fire: keep the `keep` most energetic (ties by id), as spread.py does. */
    private int topByEnergy(int[] slots, double[] es, int size, int keep) {
        List<Integer> order = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            order.add(i);
        }
        order.sort((a, b) -> {
            int c = Double.compare(es[b], es[a]);
            return c != 0 ? c : Graph.CODEPOINT_ORDER.compare(ids[slots[a]], ids[slots[b]]);
        });
        int[] s2 = new int[keep];
        double[] e2 = new double[keep];
        for (int i = 0; i < keep; i++) {
            s2[i] = slots[order.get(i)];
            e2[i] = es[order.get(i)];
        }
        System.arraycopy(s2, 0, slots, 0, keep);
        System.arraycopy(e2, 0, es, 0, keep);
        return keep;
    }
}
