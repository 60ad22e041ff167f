package kgservice.neo4j;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;

/**
 * Spreading activation over the resident graph (ResidentGraph): the same kernel as
 * SpreadEngine, over int arrays, with the graph kept coherent with the store.
 *
 * <p>Coherence. Every ingest writes, inside its own transaction, a version counter on
 * {@code (:KgMeta {id:'state'})} and a {@code (:KgChange {seq, touched, all})} node listing the
 * node ids it touched (kgservice/stores/changelog.py, changes_record.cypher). Each call reads
 * the version (and the KgMeta {@code epoch}, new after every wipe) in the caller's transaction
 * and compares it with the graph's: equal -> serve; ahead -> patch the touched nodes of each
 * change since (re-read from the store in the caller's transaction); a change that says "all",
 * a missing change (pruned log), a version behind the graph's or another epoch (wipe / restore)
 * -> rebuild. The relationship counts of the five spreading types (count store, O(1)) are a
 * second key: edges created or deleted without a change-log entry (a hand edit in Browser)
 * make them differ. Those counts are the whole database's, every workspace's together, so when
 * they moved with no change logged in this graph's workspace the workspace's own counts are
 * read (ResidentGraph.wsCounts): unchanged -> another workspace's edges moved, the graph is kept
 * ({@code kept}); changed -> an unlogged edit here, rebuild. A stale graph is never served, and
 * one team's ingest does not rebuild another team's graph.
 */
final class ResidentSpread {
    private ResidentSpread() {}

    static final Label META = Label.label("KgMeta");
    static final Label CHANGE = Label.label("KgChange");

    /** One database's graph and its lock: spreads share it, a patch or rebuild holds it alone. */
    static final class Holder {
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        volatile ResidentGraph graph;
        volatile long rebuilds;
        volatile long kept; // times the database's counts moved and this workspace's had not
        final ConcurrentLinkedQueue<Scratch> scratch = new ConcurrentLinkedQueue<>();
    }

    static final Map<String, Holder> HOLDERS = new ConcurrentHashMap<>();

    /** One resident graph per database and workspace: a workspace's graph holds its nodes only. */
    static String holder(String database) {
        return database + "\u001f" + Graph.WS.get();
    }

    /** The store state a graph must match: epoch, version, spreading relationship counts. */
    record Key(String epoch, long version, long[] counts) {}

    static Key key(Transaction tx) {
        Node meta = Graph.find(tx, META, "id", "state");
        String epoch = "";
        long version = 0;
        if (meta != null) {
            Object e = meta.getProperty("epoch", "");
            epoch = e == null ? "" : e.toString();
            Object v = meta.getProperty("version", 0L);
            version = v instanceof Number num ? num.longValue() : 0L;
        }
        return new Key(epoch, version, ResidentGraph.relCounts(tx));
    }

    private static boolean current(ResidentGraph g, Key k) {
        return g != null && g.epoch.equals(k.epoch()) && g.version == k.version() && Arrays.equals(g.relCounts, k.counts());
    }

    /** Bring the holder's graph to the caller's view of the store (caller holds the write lock). */
    private static void refresh(Holder h, Transaction tx, Key k) {
        ResidentGraph g = h.graph;
        if (g != null && g.epoch.equals(k.epoch()) && g.version == k.version() && g.wsCounts != null
                && Arrays.equals(g.wsCounts, ResidentGraph.wsCounts(tx, Graph.WS.get()))) {
            g.relCounts = k.counts(); // edges of other workspaces moved, none of this one's
            h.kept++;
            return;
        }
        if (g != null && g.epoch.equals(k.epoch()) && g.version < k.version()) {
            List<String> touched = new ArrayList<>();
            boolean ok = true;
            for (long seq = g.version + 1; seq <= k.version() && ok; seq++) {
                Node c = Graph.find(tx, CHANGE, "seq", seq);
                if (c == null || Boolean.TRUE.equals(c.getProperty("all", false))) {
                    ok = false; // pruned past us, or too many nodes to list: rebuild
                    break;
                }
                Object t = c.getProperty("touched", null);
                if (t instanceof String[] ids) {
                    touched.addAll(Arrays.asList(ids));
                } else if (t != null) {
                    ok = false; // an unexpected shape: do not guess
                }
            }
            if (ok && g.patch(tx, touched)) {
                g.version = k.version();
                // this workspace's counts: read again when other workspaces hold spreading edges;
                // when it held them all, the database's are its own (a workspace's first edges
                // written meanwhile make them too high: the next check rebuilds, never serves stale)
                g.wsCounts = g.wsCounts != null && Arrays.equals(g.wsCounts, g.relCounts)
                        ? k.counts() : ResidentGraph.wsCounts(tx, Graph.WS.get());
                g.relCounts = ResidentGraph.relCounts(tx);
                // counts that still differ from the key mean an unlogged change: rebuild
                if (Arrays.equals(g.relCounts, k.counts())) {
                    return;
                }
            }
        }
        ResidentGraph fresh = ResidentGraph.build(tx, Graph.WS.get());
        fresh.epoch = k.epoch();
        fresh.version = k.version();
        fresh.relCounts = k.counts();
        fresh.wsCounts = ResidentGraph.wsCounts(tx, Graph.WS.get());
        h.graph = fresh;
        h.scratch.clear();
        h.rebuilds++;
    }

    /** Per-call work arrays sized to the graph, reused across calls (reset sparsely). */
    static final class Scratch {
        final ResidentGraph owner;
        double[] energy, incoming, frontE;
        byte[] flags;
        final Touched touched = new Touched(1024);
        int[] frontier = new int[1024], active = new int[1024];

        Scratch(ResidentGraph g) {
            owner = g;
            int cap = g.n + 1024;
            energy = new double[cap];
            incoming = new double[cap];
            frontE = new double[cap];
            flags = new byte[cap];
        }

        void ensure(int n) {
            if (n > flags.length) {
                int cap = n + n / 4;
                energy = Arrays.copyOf(energy, cap);
                incoming = Arrays.copyOf(incoming, cap);
                frontE = Arrays.copyOf(frontE, cap);
                flags = Arrays.copyOf(flags, cap);
            }
        }
    }

    private static final byte SEED = 2, ACTIVE = 4, TOUCHED = Touched.BIT, FRONT = 16;

    static SpreadEngine.Result run(String database, Transaction tx, Map<String, Double> seeds,
                                   SpreadEngine.Params p, int limit) {
        Holder h = HOLDERS.computeIfAbsent(holder(database), d -> new Holder());
        Key k = key(tx);
        h.lock.readLock().lock();
        if (!current(h.graph, k)) {
            h.lock.readLock().unlock();
            h.lock.writeLock().lock();
            try {
                if (!current(h.graph, k)) {
                    refresh(h, tx, k);
                }
                h.lock.readLock().lock(); // downgrade: spreads run side by side, patches wait
            } finally {
                h.lock.writeLock().unlock();
            }
        }
        try {
            ResidentGraph g = h.graph;
            Scratch s = h.scratch.poll();
            if (s == null || s.owner != g) {
                s = new Scratch(g);
            }
            s.ensure(g.n);
            SpreadEngine.Result r = spread(g, s, tx, seeds, p, limit);
            h.scratch.offer(s); // only after a clean finish: a failed call may leave flags set
            return r;
        } finally {
            h.lock.readLock().unlock();
        }
    }

    /** Build (or bring up to date) the database's graph now and report it. */
    static Holder warm(String database, Transaction tx) {
        Holder h = HOLDERS.computeIfAbsent(holder(database), d -> new Holder());
        Key k = key(tx);
        h.lock.writeLock().lock();
        try {
            if (!current(h.graph, k)) {
                refresh(h, tx, k);
            }
        } finally {
            h.lock.writeLock().unlock();
        }
        return h;
    }

    static void drop(String database) {
        Holder h = HOLDERS.get(holder(database));
        if (h != null) {
            h.lock.writeLock().lock();
            try {
                h.graph = null;
                h.scratch.clear();
            } finally {
                h.lock.writeLock().unlock();
            }
        }
    }

    private static SpreadEngine.Result spread(ResidentGraph g, Scratch s, Transaction tx, Map<String, Double> seeds,
                                              SpreadEngine.Params p, int limit) {
        double[] energy = s.energy, incoming = s.incoming, frontE = s.frontE;
        byte[] flags = s.flags;
        int[] frontier = s.frontier, active = s.active;
        Touched touched = s.touched;
        int frontierSize = 0, activeSize = 0;
        Map<String, Double> unknown = new LinkedHashMap<>();
        boolean unknownInFrontier = false;
        for (Map.Entry<String, Double> seed : seeds.entrySet()) {
            double e = seed.getValue();
            Node node = Graph.node(tx, seed.getKey());
            int i = node == null ? -1 : g.dense(node.getId());
            if (i < 0) {
                unknown.put(seed.getKey(), e); // in the result, spreads nothing (as on the embedded store)
                unknownInFrontier |= e >= p.epsilon();
                continue;
            }
            if ((flags[i] & ACTIVE) == 0) {
                if (activeSize == active.length) {
                    active = Arrays.copyOf(active, activeSize * 2);
                }
                active[activeSize++] = i;
            }
            energy[i] = e;
            flags[i] |= SEED | ACTIVE;
            if (e >= p.epsilon() && (flags[i] & FRONT) == 0) {
                if (frontierSize == frontier.length) {
                    frontier = Arrays.copyOf(frontier, frontierSize * 2);
                }
                flags[i] |= FRONT;
                frontier[frontierSize++] = i;
            }
            if (e >= p.epsilon()) {
                frontE[i] = e;
            }
        }
        for (int f = 0; f < frontierSize; f++) {
            flags[frontier[f]] &= ~FRONT;
        }
        double[] tau = p.tau();
        int[] rowStart = g.rowStart, rowTarget = g.rowTarget;
        int[][] overlay = g.overlay;
        int K = ResidentGraph.KINDS;
        int[] off = new int[K + 1];
        int hops = 0;
        while ((frontierSize > 0 || (hops == 0 && unknownInFrontier)) && hops < p.maxHops()) {
            hops++;
            boolean limitFanout = p.maxFanout() != null && hops > 1;
            sortById(g, frontier, frontierSize);
            touched.size = 0;
            for (int f = 0; f < frontierSize; f++) {
                int n = frontier[f];
                if (limitFanout && g.storedDegree[n] > p.maxFanout()) {
                    continue;
                }
                int[] o = overlay[n];
                int[] targets;
                int base;
                if (o != null) {
                    targets = o;
                    base = K + 1;
                    System.arraycopy(o, 0, off, 0, K + 1);
                } else {
                    targets = rowTarget;
                    base = 0;
                    for (int k = 0; k <= K; k++) {
                        off[k] = rowStart[n * K + k];
                    }
                }
                int rows = 0;
                for (int k = 0; k < K; k++) {
                    if (tau[k] > 0) {
                        rows += off[k + 1] - off[k];
                    }
                }
                // (e / max(1, d) ** damping) * tau, in the order docs/spreading.md and the embedded store use
                double e = frontE[n];
                double share = Spreading.share(e, rows, p.degreeDamping());
                for (int k = 0; k < K; k++) {
                    double t = tau[k];
                    if (!(t > 0)) {
                        continue;
                    }
                    double add = share * t;
                    for (int r = base + off[k], end = base + off[k + 1]; r < end; r++) {
                        int m = targets[r];
                        // without backflow a row towards a seed counts in d (above) but carries nothing
                        if (!p.seedBackflow() && (flags[m] & SEED) != 0) {
                            continue;
                        }
                        touched.add(flags, incoming, m, add);
                    }
                }
            }
            // every node that received energy this hop adds it; the strong ones spread next
            frontierSize = 0;
            if (frontier.length < touched.size) {
                frontier = new int[touched.size];
            }
            for (int i = 0; i < touched.size; i++) {
                int m = touched.nodes[i];
                flags[m] &= ~TOUCHED;
                double in = incoming[m];
                if ((flags[m] & ACTIVE) == 0) {
                    energy[m] = in;
                    flags[m] |= ACTIVE;
                    if (activeSize == active.length) {
                        active = Arrays.copyOf(active, activeSize * 2);
                    }
                    active[activeSize++] = m;
                } else {
                    energy[m] = energy[m] + in;
                }
                if (in >= p.epsilon()) {
                    frontier[frontierSize++] = m;
                    frontE[m] = in;
                }
            }
            if (p.maxFire() != null && frontierSize > p.maxFire()) {
                frontierSize = topByEnergy(g, frontier, frontE, frontierSize, p.maxFire());
            }
        }
        s.frontier = frontier;
        s.active = active;
        SpreadEngine.Result result = collect(g, active, activeSize, energy, hops, unknown, limit);
        for (int i = 0; i < activeSize; i++) {
            flags[active[i]] = 0; // sparse reset for the next call
        }
        return result;
    }

    /** Node i before node j in the library's id order. */
    private static boolean before(ResidentGraph g, int i, int j) {
        if (i < g.sortedCount && j < g.sortedCount) {
            return i < j;
        }
        return Graph.CODEPOINT_ORDER.compare(g.id(i), g.id(j)) < 0;
    }

    private static void sortById(ResidentGraph g, int[] a, int size) {
        Arrays.sort(a, 0, size); // dense order is id order for the nodes built at once
        boolean tail = false;
        for (int i = 0; i < size && !tail; i++) {
            tail = a[i] >= g.sortedCount;
        }
        if (tail) { // nodes appended by patches: compare their ids
            Integer[] boxed = new Integer[size];
            for (int i = 0; i < size; i++) {
                boxed[i] = a[i];
            }
            Arrays.sort(boxed, (x, y) -> x.equals(y) ? 0 : before(g, x, y) ? -1 : 1);
            for (int i = 0; i < size; i++) {
                a[i] = boxed[i];
            }
        }
    }

    /** max_fire: keep the `keep` most energetic (ties by id), as spread.py does. */
    private static int topByEnergy(ResidentGraph g, int[] a, double[] e, int size, int keep) {
        Integer[] boxed = new Integer[size];
        for (int i = 0; i < size; i++) {
            boxed[i] = a[i];
        }
        Arrays.sort(boxed, (x, y) -> {
            int c = Double.compare(e[y], e[x]);
            return c != 0 ? c : x.equals(y) ? 0 : before(g, x, y) ? -1 : 1;
        });
        for (int i = 0; i < keep; i++) {
            a[i] = boxed[i];
        }
        return keep;
    }

    /** Every activated node (limit 0), or the `limit` most energetic, ties by id: a bounded heap
     *  over the activated ones, so a 200k-node spread ships a handful of rows. */
    private static SpreadEngine.Result collect(ResidentGraph g, int[] active, int size, double[] energy, int hops,
                                               Map<String, Double> unknown, int limit) {
        Map<String, Double> out;
        if (limit <= 0 || limit >= size + unknown.size()) {
            out = new LinkedHashMap<>(size + unknown.size());
            for (int i = 0; i < size; i++) {
                out.put(g.id(active[i]), energy[active[i]]);
            }
            out.putAll(unknown);
            return new SpreadEngine.Result(out, hops, size + unknown.size(), "resident");
        }
        // min-heap of the best `limit` (root = the worst kept)
        int[] heap = new int[limit];
        int hs = 0;
        for (int x = 0; x < size; x++) {
            int i = active[x];
            if (hs < limit) {
                heap[hs] = i;
                siftUp(g, heap, hs++, energy);
            } else if (better(g, i, heap[0], energy)) {
                heap[0] = i;
                siftDown(g, heap, hs, energy);
            }
        }
        out = new LinkedHashMap<>(hs + unknown.size());
        for (int x = 0; x < hs; x++) {
            out.put(g.id(heap[x]), energy[heap[x]]);
        }
        // unknown seeds keep their energy; the library ranks them with the rest
        out.putAll(unknown);
        return new SpreadEngine.Result(out, hops, size + unknown.size(), "resident");
    }

    /** i ranks before j: more energy, ties by id. */
    private static boolean better(ResidentGraph g, int i, int j, double[] e) {
        int c = Double.compare(e[i], e[j]);
        return c != 0 ? c > 0 : before(g, i, j);
    }

    private static void siftUp(ResidentGraph g, int[] h, int i, double[] e) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (better(g, h[parent], h[i], e)) { // parent ranks better: the worse must be on top
                int t = h[parent];
                h[parent] = h[i];
                h[i] = t;
                i = parent;
            } else {
                return;
            }
        }
    }

    private static void siftDown(ResidentGraph g, int[] h, int size, double[] e) {
        int i = 0;
        while (true) {
            int l = 2 * i + 1, r = l + 1, worst = i;
            if (l < size && better(g, h[worst], h[l], e)) {
                worst = l;
            }
            if (r < size && better(g, h[worst], h[r], e)) {
                worst = r;
            }
            if (worst == i) {
                return;
            }
            int t = h[worst];
            h[worst] = h[i];
            h[i] = t;
            i = worst;
        }
    }
}
