package kgservice.neo4j;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/** kg.spread / kg.spreadLists: spreading activation in one call (see SpreadEngine). */
public class SpreadProcedures {
    // one description per argument, shared by kg.spread and kg.spreadLists (same arguments)
    static final String D_SEEDS = "start energy per node id or label (any case / width, as `kg expand` takes it), e.g. {Python: 1.0}";
    static final String D_TAU = "energy factor per family kind; null: the lexicon's";
    static final String D_EPSILON = "a node whose incoming energy this hop is below it does not spread on; in (0, 1)";
    static final String D_MAX_HOPS = "hops (K), 1..10";
    static final String D_MAX_FANOUT = "from hop 2 on, a node with more relation edges passes nothing; 0: off";
    static final String D_MAX_FIRE = "at most this many nodes spread on from each hop; 0: off";
    static final String D_DEGREE_DAMPING = "hub damping δ: each row carries e / max(1, d)^δ * tau; null: the lexicon's (spread.degree_damping)";
    static final String D_SEED_BACKFLOW = "false: seeds receive no energy during the hops; null: the lexicon's (spread.seed_backflow)";
    static final String D_LIMIT = "the N most energetic nodes (ties by id); 0: all";
    static final String D_ENGINE = "'resident' (in-memory graph), 'walk' (the store) or 'auto'";

    @Context
    public Transaction tx;

    @Context
    public GraphDatabaseService db;

    /** One activated node and its energy. */
    public record SpreadRow(String node, double energy) {
    }

    /** The whole spread as parallel lists (unordered), with how many hops ran and how many nodes were reached. */
    public record SpreadLists(List<String> nodes, List<Double> energies, long hops, long activated, String engine) {
    }

    public static class GraphStats {
        public String engine;
        public long nodes;
        public long rows;
        public long bytes;
        public long buildMillis;
        public long version;
        public long rebuilds;
        public long kept;
        public long patches;
        public long patchedNodes;
        public long lastPatchMillis;
        public long lastPatchNodes;

        GraphStats(String engine, ResidentGraph g, ResidentSpread.Holder h) {
            this.engine = engine;
            if (g != null) {
                nodes = g.n;
                rows = g.rows();
                bytes = g.bytes();
                buildMillis = g.buildMillis;
                version = g.version;
                patches = g.patches;
                patchedNodes = g.overlaid;
                lastPatchMillis = g.lastPatchMillis;
                lastPatchNodes = g.lastPatchNodes;
            }
            rebuilds = h == null ? 0 : h.rebuilds;
            kept = h == null ? 0 : h.kept;
        }
    }

    @Procedure(name = "kg.spread", mode = Mode.READ)
    @Description("kg.spread(seeds :: MAP {nodeId: energy}, tau = lexicon defaults, epsilon = 0.05, maxHops = 3, "
            + "maxFanout = 0 (off), maxFire = 0 (off), degreeDamping = seedBackflow = the lexicon's (0.5, false), limit = 0 (all), "
            + "engine = 'auto') :: (node, energy) - spreading activation as `kg expand --spread`, rows by energy "
            + "(highest first); engine 'resident' (the in-memory graph), 'walk' (the store, per call) or 'auto'")
    public Stream<SpreadRow> spread(
            @Name(value = "seeds", description = D_SEEDS) Map<String, Object> seeds,
            @Name(value = "tau", defaultValue = "null", description = D_TAU) Map<String, Object> tau,
            @Name(value = "epsilon", defaultValue = "0.05", description = D_EPSILON) double epsilon,
            @Name(value = "maxHops", defaultValue = "3", description = D_MAX_HOPS) long maxHops,
            @Name(value = "maxFanout", defaultValue = "0", description = D_MAX_FANOUT) long maxFanout,
            @Name(value = "maxFire", defaultValue = "0", description = D_MAX_FIRE) long maxFire,
            @Name(value = "degreeDamping", defaultValue = "null", description = D_DEGREE_DAMPING) Object degreeDamping,
            @Name(value = "seedBackflow", defaultValue = "null", description = D_SEED_BACKFLOW) Object seedBackflow,
            @Name(value = "limit", defaultValue = "0", description = D_LIMIT) long limit,
            @Name(value = "engine", defaultValue = "auto", description = D_ENGINE) String engine,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        SpreadEngine.Result r = run(seeds, tau, epsilon, maxHops, maxFanout, maxFire, degreeDamping, seedBackflow,
                limit, engine);
        List<SpreadRow> rows = new ArrayList<>(r.energy().size());
        r.energy().forEach((k, v) -> rows.add(new SpreadRow(k, v)));
        rows.sort(Comparator.<SpreadRow>comparingDouble(x -> -x.energy())
                .thenComparing(x -> x.node(), Graph.CODEPOINT_ORDER));
        return (limit > 0 && rows.size() > limit ? rows.subList(0, (int) limit) : rows).stream();
    }

    @Procedure(name = "kg.spreadLists", mode = Mode.READ)
    @Description("kg.spreadLists(same arguments as kg.spread) :: (nodes, energies, hops, activated, engine) - one row "
            + "of parallel lists (unordered), for clients: one row costs a fraction of a hundred thousand. With limit N "
            + "> 0 the lists hold the N most energetic nodes (ties by id) plus unknown seeds; `activated` counts all")
    public Stream<SpreadLists> spreadLists(
            @Name(value = "seeds", description = D_SEEDS) Map<String, Object> seeds,
            @Name(value = "tau", defaultValue = "null", description = D_TAU) Map<String, Object> tau,
            @Name(value = "epsilon", defaultValue = "0.05", description = D_EPSILON) double epsilon,
            @Name(value = "maxHops", defaultValue = "3", description = D_MAX_HOPS) long maxHops,
            @Name(value = "maxFanout", defaultValue = "0", description = D_MAX_FANOUT) long maxFanout,
            @Name(value = "maxFire", defaultValue = "0", description = D_MAX_FIRE) long maxFire,
            @Name(value = "degreeDamping", defaultValue = "null", description = D_DEGREE_DAMPING) Object degreeDamping,
            @Name(value = "seedBackflow", defaultValue = "null", description = D_SEED_BACKFLOW) Object seedBackflow,
            @Name(value = "limit", defaultValue = "0", description = D_LIMIT) long limit,
            @Name(value = "engine", defaultValue = "auto", description = D_ENGINE) String engine,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        SpreadEngine.Result r = run(seeds, tau, epsilon, maxHops, maxFanout, maxFire, degreeDamping, seedBackflow,
                limit, engine);
        List<String> nodes = new ArrayList<>(r.energy().size());
        List<Double> energies = new ArrayList<>(r.energy().size());
        r.energy().forEach((k, v) -> {
            nodes.add(k);
            energies.add(v);
        });
        return Stream.of(new SpreadLists(nodes, energies, r.hops(), r.activated(), r.engine()));
    }

    @Procedure(name = "kg.spreadGraph", mode = Mode.READ)
    @Description("kg.spreadGraph() :: (engine, nodes, rows, bytes, buildMillis, version, rebuilds, kept, patches, "
            + "patchedNodes, lastPatchMillis, lastPatchNodes) - build (or bring up to date) the resident spreading graph of this database now "
            + "and report its size; engine 'walk' when it is disabled or would not fit the heap")
    public Stream<GraphStats> spreadGraph(@Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        if (!residentAllowed()) {
            return Stream.of(new GraphStats("walk", null, ResidentSpread.HOLDERS.get(ResidentSpread.holder(db.databaseName()))));
        }
        ResidentSpread.Holder h = ResidentSpread.warm(db.databaseName(), tx);
        return Stream.of(new GraphStats("resident", h.graph, h));
    }

    @Procedure(name = "kg.spreadGraphDrop", mode = Mode.READ)
    @Description("kg.spreadGraphDrop() - forget this database's resident spreading graph (the next spread "
            + "rebuilds it): frees its heap, and measures the cold start")
    public void spreadGraphDrop(@Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        ResidentSpread.drop(db.databaseName());
    }

    /** The resident graph is used unless switched off (-Dkgservice.spread.resident=false or
     *  KG_SPREAD_RESIDENT=0 in the server's environment) or its estimated size would take more
     *  than a third of the heap (-XX:+ExitOnOutOfMemoryError: better slower than dead). */
    private boolean residentAllowed() {
        String off = System.getProperty("kgservice.spread.resident", System.getenv("KG_SPREAD_RESIDENT"));
        if (off != null && (off.equals("0") || off.equalsIgnoreCase("false"))) {
            return false;
        }
        ResidentSpread.Holder h = ResidentSpread.HOLDERS.get(ResidentSpread.holder(db.databaseName()));
        if (h != null && h.graph != null) {
            return true;
        }
        return ResidentGraph.estimateBytes(tx) < Runtime.getRuntime().maxMemory() / 3;
    }

    private SpreadEngine.Result run(Map<String, Object> seeds, Map<String, Object> tau, double epsilon, long maxHops,
                                    long maxFanout, long maxFire, Object damping, Object backflow,
                                    long limit, String engine) {
        // null: the lexicon's, as KnowledgeBase.spread_params() takes them, so that a Browser call
        // with the seeds alone answers as `kg expand --mode spread` does on the default settings.
        // Typed ANY: Neo4j parses no "null" default for a FLOAT or BOOLEAN argument
        if (damping != null && !(damping instanceof Number)) {
            throw new IllegalArgumentException("degreeDamping must be a number >= 0 or null (the lexicon's), got " + damping);
        }
        if (backflow != null && !(backflow instanceof Boolean)) {
            throw new IllegalArgumentException("seedBackflow must be true, false or null (the lexicon's), got " + backflow);
        }
        double degreeDamping = damping != null ? ((Number) damping).doubleValue() : Spreading.lexiconDegreeDamping();
        boolean seedBackflow = backflow != null ? (Boolean) backflow : Spreading.lexiconSeedBackflow();
        if (limit < 0) {
            throw new IllegalArgumentException("limit must be a positive number of nodes or 0 (all), got " + limit);
        }
        if (!List.of("auto", "resident", "walk").contains(engine)) {
            throw new IllegalArgumentException("engine must be 'auto', 'resident' or 'walk', got '" + engine + "'");
        }
        // the checks of SpreadParams.__post_init__, so a Browser user gets the library's answer
        if (seeds == null) {
            throw new IllegalArgumentException("seeds must be a map {node id: energy}");
        }
        if (maxHops < 1 || maxHops > 10) {
            throw new IllegalArgumentException("maxHops (K) must be 1..10, got " + maxHops);
        }
        if (!(epsilon > 0 && epsilon < 1)) {
            throw new IllegalArgumentException("epsilon must be in (0, 1), got " + epsilon);
        }
        if (maxFanout < 0) {
            throw new IllegalArgumentException("maxFanout must be a positive number of edges or 0 (off), got " + maxFanout);
        }
        if (maxFire < 0) {
            throw new IllegalArgumentException("maxFire must be a positive number of nodes or 0 (off), got " + maxFire);
        }
        if (!(degreeDamping >= 0) || Double.isInfinite(degreeDamping)) {
            throw new IllegalArgumentException("degreeDamping must be a finite number >= 0, got " + degreeDamping);
        }
        Map<String, Object> t = tau == null ? new LinkedHashMap<>(Spreading.lexiconTau()) : tau;
        double[] weights = new double[Graph.SPREAD_KINDS.length];
        for (Map.Entry<String, Object> e : t.entrySet()) {
            int k = List.of(Graph.SPREAD_KINDS).indexOf(e.getKey());
            if (k < 0) {
                throw new IllegalArgumentException("tau given for '" + e.getKey()
                        + "', which spreading activation does not walk (kinds: " + String.join(", ", Graph.SPREAD_KINDS) + ")");
            }
            if (!(e.getValue() instanceof Number num)) {
                throw new IllegalArgumentException("tau['" + e.getKey() + "'] must be a number");
            }
            weights[k] = num.doubleValue();
        }
        Map<String, Double> seedEnergy = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : seeds.entrySet()) {
            if (!(e.getValue() instanceof Number num)) {
                throw new IllegalArgumentException("seed '" + e.getKey() + "' needs a numeric energy, got " + e.getValue());
            }
            seedEnergy.merge(NodeIds.resolve(tx, e.getKey()), num.doubleValue(), Math::max);
        }
        var params = new SpreadEngine.Params(weights, epsilon, (int) maxHops,
                maxFanout == 0 ? null : (Integer) (int) Math.min(Integer.MAX_VALUE, maxFanout),
                maxFire == 0 ? null : (Integer) (int) Math.min(Integer.MAX_VALUE, maxFire), degreeDamping, seedBackflow);
        boolean resident = engine.equals("resident") || (engine.equals("auto") && residentAllowed());
        if (resident) {
            return ResidentSpread.run(db.databaseName(), tx, seedEnergy, params, (int) Math.min(Integer.MAX_VALUE, limit));
        }
        SpreadEngine.Result r = new SpreadEngine(tx).run(seedEnergy, params);
        return limit > 0 ? SpreadEngine.top(r, (int) Math.min(Integer.MAX_VALUE, limit)) : r;
    }
}
