package kgservice.neo4j;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/** kg.spread / kg.spreadLists: spreading activation in one call (see SpreadEngine). */
public class SpreadProcedures {
    /** kgservice.expansion.spread.DEFAULT_TAU (= families/lexicon.json), alphabetical kinds. */
    static final Map<String, Double> DEFAULT_TAU = Map.of(
            "synonym", 0.9, "belongs_to", 0.7, "of", 0.5, "content", 0.3, "related_to", 0.2);

    @Context
    public Transaction tx;

    public static class SpreadRow {
        public String node;
        public double energy;

        public SpreadRow(String node, double energy) {
            this.node = node;
            this.energy = energy;
        }
    }

    public static class SpreadLists {
        public List<String> nodes;
        public List<Double> energies;
        public long hops;

        public SpreadLists(List<String> nodes, List<Double> energies, long hops) {
            this.nodes = nodes;
            this.energies = energies;
            this.hops = hops;
        }
    }

    @Procedure(name = "kg.spread", mode = Mode.READ)
    @Description("kg.spread(seeds :: MAP {nodeId: energy}, tau = lexicon defaults, epsilon = 0.05, maxHops = 3, "
            + "maxFanout = 0 (off), maxFire = 0 (off), degreeDamping = 0.0, seedBackflow = true) :: (node, energy) - "
            + "spreading activation as `kg expand --spread`, rows by energy (highest first)")
    public Stream<SpreadRow> spread(
            @Name("seeds") Map<String, Object> seeds,
            @Name(value = "tau", defaultValue = "null") Map<String, Object> tau,
            @Name(value = "epsilon", defaultValue = "0.05") double epsilon,
            @Name(value = "maxHops", defaultValue = "3") long maxHops,
            @Name(value = "maxFanout", defaultValue = "0") long maxFanout,
            @Name(value = "maxFire", defaultValue = "0") long maxFire,
            @Name(value = "degreeDamping", defaultValue = "0.0") double degreeDamping,
            @Name(value = "seedBackflow", defaultValue = "true") boolean seedBackflow) {
        SpreadEngine.Result r = run(seeds, tau, epsilon, maxHops, maxFanout, maxFire, degreeDamping, seedBackflow);
        List<SpreadRow> rows = new ArrayList<>(r.energy().size());
        r.energy().forEach((k, v) -> rows.add(new SpreadRow(k, v)));
        rows.sort(Comparator.<SpreadRow>comparingDouble(x -> -x.energy)
                .thenComparing(x -> x.node, Graph.CODEPOINT_ORDER));
        return rows.stream();
    }

    @Procedure(name = "kg.spreadLists", mode = Mode.READ)
    @Description("kg.spreadLists(same arguments as kg.spread) :: (nodes, energies, hops) - one row of parallel "
            + "lists (unordered), for clients: one row costs a fraction of a hundred thousand")
    public Stream<SpreadLists> spreadLists(
            @Name("seeds") Map<String, Object> seeds,
            @Name(value = "tau", defaultValue = "null") Map<String, Object> tau,
            @Name(value = "epsilon", defaultValue = "0.05") double epsilon,
            @Name(value = "maxHops", defaultValue = "3") long maxHops,
            @Name(value = "maxFanout", defaultValue = "0") long maxFanout,
            @Name(value = "maxFire", defaultValue = "0") long maxFire,
            @Name(value = "degreeDamping", defaultValue = "0.0") double degreeDamping,
            @Name(value = "seedBackflow", defaultValue = "true") boolean seedBackflow) {
        SpreadEngine.Result r = run(seeds, tau, epsilon, maxHops, maxFanout, maxFire, degreeDamping, seedBackflow);
        List<String> nodes = new ArrayList<>(r.energy().size());
        List<Double> energies = new ArrayList<>(r.energy().size());
        r.energy().forEach((k, v) -> {
            nodes.add(k);
            energies.add(v);
        });
        return Stream.of(new SpreadLists(nodes, energies, r.hops()));
    }

    private SpreadEngine.Result run(Map<String, Object> seeds, Map<String, Object> tau, double epsilon, long maxHops,
                                    long maxFanout, long maxFire, double degreeDamping, boolean seedBackflow) {
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
        Map<String, Object> t = tau == null ? new LinkedHashMap<>(DEFAULT_TAU) : tau;
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
            seedEnergy.put(e.getKey(), num.doubleValue());
        }
        var params = new SpreadEngine.Params(weights, epsilon, (int) maxHops,
                maxFanout == 0 ? null : (Integer) (int) Math.min(Integer.MAX_VALUE, maxFanout),
                maxFire == 0 ? null : (Integer) (int) Math.min(Integer.MAX_VALUE, maxFire), degreeDamping, seedBackflow);
        return new SpreadEngine(tx).run(seedEnergy, params);
    }
}
