package kgservice.neo4j;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/** The closures and directed expansion as kg.* procedures (same answers as the library). */
public class ClosureProcedures {
    @Context
    public Transaction tx;

    /** One node id. */
    public record NodeRow(String node) {
    }

    /** One unit id. */
    public record UnitRow(String unit) {
    }

    /** A belongs-to ancestor, its shortest depth and the units stated on it. */
    public record AncestorRow(String ancestor, long depth, List<String> units) {
    }

    /** A unit and the terminal units of its supersession chain. */
    public record EndsRow(String unit, List<String> ends) {
    }

    /** A node / unit / superseded unit of a directed expansion with why it is there. */
    public record ExpandRow(String kind, String id, List<String> why) {
    }

    private Closures closures() {
        return new Closures(tx);
    }

    private static Stream<NodeRow> nodes(List<String> ids) {
        return ids.stream().map(NodeRow::new);
    }

    @Procedure(name = "kg.synonymClass", mode = Mode.READ)
    @Description("kg.synonymClass(nodeId) :: (node) - the ≡ class over live SYNONYM edges (either direction, "
            + "<= 10 hops), the node itself included, ordered")
    public Stream<NodeRow> synonymClass(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return nodes(closures().synonymClass(NodeIds.resolve(tx, nodeId)));
    }

    @Procedure(name = "kg.belongsToClosure", mode = Mode.READ)
    @Description("kg.belongsToClosure(nodeId) :: (ancestor, depth, units) - transitive live belongs-to ancestors "
            + "with their shortest depth (<= 10) and the units stated on each (facts that sink to the node)")
    public Stream<AncestorRow> belongsToClosure(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        Closures c = closures();
        List<AncestorRow> rows = new ArrayList<>();
        c.belongsToAncestors(NodeIds.resolve(tx, nodeId)).forEach((a, d) -> rows.add(new AncestorRow(a, d, c.subjectMentions(a))));
        rows.sort((x, y) -> x.depth() != y.depth() ? Long.compare(x.depth(), y.depth())
                : Graph.CODEPOINT_ORDER.compare(x.ancestor(), y.ancestor()));
        return rows.stream();
    }

    @Procedure(name = "kg.supersededEnd", mode = Mode.READ)
    @Description("kg.supersededEnd(unitIds) :: (unit, ends) - the terminal units of each unit's supersession "
            + "chain ([unit] when it is live or not stored)")
    public Stream<EndsRow> supersededEnd(@Name(value = "unitIds", description = "unit ids") List<String> unitIds,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return closures().supersededEnd(unitIds).entrySet().stream().map(e -> new EndsRow(e.getKey(), e.getValue()));
    }

    @Procedure(name = "kg.nodeSupersededEnd", mode = Mode.READ)
    @Description("kg.nodeSupersededEnd(nodeId) :: (node) - terminal nodes of a node-level supersession chain "
            + "(v1 -> v2 -> v3 gives v3), the node itself when nothing replaces it")
    public Stream<NodeRow> nodeSupersededEnd(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return nodes(closures().nodeSupersededEnd(NodeIds.resolve(tx, nodeId)));
    }

    @Procedure(name = "kg.subjectMentions", mode = Mode.READ)
    @Description("kg.subjectMentions(nodeId) :: (unit) - units whose subject is the node, ordered")
    public Stream<UnitRow> subjectMentions(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return closures().subjectMentions(NodeIds.resolve(tx, nodeId)).stream().map(UnitRow::new);
    }

    @Procedure(name = "kg.contextMentions", mode = Mode.READ)
    @Description("kg.contextMentions(nodeId) :: (unit) - units with the node as an argument or modifier value")
    public Stream<UnitRow> contextMentions(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return closures().contextMentions(NodeIds.resolve(tx, nodeId)).stream().map(UnitRow::new);
    }

    @Procedure(name = "kg.narrowedBy", mode = Mode.READ)
    @Description("kg.narrowedBy(nodeId) :: (node) - derived nodes that narrow the base node")
    public Stream<NodeRow> narrowedBy(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return nodes(closures().narrowedBy(NodeIds.resolve(tx, nodeId)));
    }

    @Procedure(name = "kg.narrows", mode = Mode.READ)
    @Description("kg.narrows(nodeId) :: (node) - base nodes the derived node narrows")
    public Stream<NodeRow> narrows(@Name(value = "nodeId", description = "a node id or label (any case / width), as `kg expand` takes it") String nodeId,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        return nodes(closures().narrows(NodeIds.resolve(tx, nodeId)));
    }

    @Procedure(name = "kg.expand", mode = Mode.READ)
    @Description("kg.expand(seeds :: LIST<STRING>) :: (kind, id, why) - directed expansion as `kg expand`: "
            + "kind 'node' / 'unit' with the reasons it is there, 'superseded' with its terminal units as why")
    public Stream<ExpandRow> expand(@Name(value = "seeds", description = "node ids or labels, as `kg expand` takes them") List<String> seeds,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        Directed d = Directed.expand(closures(), NodeIds.resolveAll(tx, seeds));
        List<ExpandRow> rows = new ArrayList<>();
        addAll(rows, "node", d.nodes);
        addAll(rows, "unit", d.units);
        addAll(rows, "superseded", d.superseded);
        return rows.stream();
    }

    /** One causal chain: its nodes (seed first, end last), the unit of each hop, and the end. */
    public record ChainRow(String seed, List<String> nodes, List<String> units, String end, long hops,
                           boolean truncated) {
    }

    @Procedure(name = "kg.causalChain", mode = Mode.READ)
    @Description("kg.causalChain(node, maxHops = 3, family = '导致') :: (seed, nodes, units, end, hops, truncated) - "
            + "the causal chains from a node as `kg expand NODE --mode causal`: live cause -> effect units of the "
            + "family downstream, ≡ classes and node replacements followed, longest first; units cite every hop")
    public Stream<ChainRow> causalChain(
            @Name(value = "node", description = "a node id or label (any case / width), as `kg expand` takes it") String node,
            @Name(value = "maxHops", defaultValue = "3", description = "at most this many hops, 1..10") long maxHops,
            @Name(value = "family", defaultValue = "导致", description = "the content family the chain follows (its base member)") String family,
            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws) {
        Graph.ws(ws);
        String seed = NodeIds.resolve(tx, node);
        CausalChains.Result r = new CausalChains(tx).walk(seed, (int) Math.max(0, Math.min(11, maxHops)), family);
        List<ChainRow> rows = new ArrayList<>();
        for (List<CausalChains.Hop> c : r.chains()) {
            List<String> nodes = new ArrayList<>();
            nodes.add(c.get(0).src());
            List<String> units = new ArrayList<>();
            for (CausalChains.Hop h : c) {
                nodes.add(h.dst());
                units.add(h.unit());
            }
            rows.add(new ChainRow(seed, nodes, units, c.get(c.size() - 1).dst(), c.size(), r.truncated()));
        }
        return rows.stream();
    }

    private static void addAll(List<ExpandRow> rows, String kind, Map<String, List<String>> table) {
        Map<String, List<String>> ordered = new TreeMap<>(Graph.CODEPOINT_ORDER);
        ordered.putAll(table);
        ordered.forEach((k, v) -> rows.add(new ExpandRow(kind, k, v)));
    }
}
