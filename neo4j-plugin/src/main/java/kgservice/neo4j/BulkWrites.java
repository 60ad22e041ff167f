package kgservice.neo4j;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.TokenWrite;
import org.neo4j.internal.kernel.api.Write;
import org.neo4j.exceptions.KernelException;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;
import org.neo4j.values.storable.Value;
import org.neo4j.values.storable.Values;

/**
 * The ingest write path's three bulk statements as procedures: the same nodes, units, edges and
 * properties as cypher/ingest_new_nodes, ingest_units and ingest_relations, written through the
 * kernel's write API inside the caller's transaction (so a batch stays one transaction, all or
 * nothing). Cypher spent most of a batch's statement time in its row-by-row map handling and
 * property setting (a profile of a 100k ingest: 41% of the server's CPU in Cypher execution,
 * scripts/bench/RESULTS.md); these do the same work with token ids looked up once per call.
 * The Python side uses them when the server has this plugin and falls back to the Cypher
 * files otherwise (kgservice/stores/neo4j/writes.py).
 */
public class BulkWrites {
    @Context
    public Transaction tx;

    /** The created nodes' ids and element ids, in the order given. */
    public record CreatedNodes(List<String> ids, List<String> eids) {
    }

    /** How many rows were written. */
    public record Created(long created) {
    }

    /** Relationship kinds ingest_relations creates (the type is the kind upper-cased). */
    static final Set<String> RELATION_KINDS =
            Set.of("synonym", "belongs_to", "of", "related_to", "content", "superseded", "narrowed_by");

    /** Unit properties in the order ingest_units sets them. */
    static final String[] UNIT_KEYS =
            {"id", "json", "text", "predicate", "family", "kind", "doc", "mode", "ingested_at", "probe"};

    private static final class Ops {
        final KernelTransaction ktx;
        final InternalTransaction itx;
        final Write write;
        final TokenWrite tokens;

        Ops(Transaction tx) throws KernelException {
            itx = (InternalTransaction) tx;
            ktx = itx.kernelTransaction();
            write = ktx.dataWrite();
            tokens = ktx.tokenWrite();
        }

        int label(String name) throws KernelException {
            return tokens.labelGetOrCreateForName(name);
        }

        int key(String name) throws KernelException {
            return tokens.propertyKeyGetOrCreateForName(name);
        }

        int type(String name) throws KernelException {
            return tokens.relationshipTypeGetOrCreateForName(name);
        }

        long node(Object elementId) {
            return itx.elementIdMapper().nodeId((String) elementId);
        }

        String elementId(long node) {
            return itx.elementIdMapper().nodeElementId(node);
        }
    }

    /** A property value as Cypher would store it; null means "not set" (CREATE skips nulls). */
    private static Value value(Object o) {
        return o == null ? null : Values.of(o);
    }

    @Procedure(name = "kg.createNodes", mode = Mode.WRITE)
    @Description("kg.createNodes(nodes, ws) :: (ids, eids) - CREATE (:Node {ws, id, label, kind}) per row, as "
            + "cypher/ingest_new_nodes.cypher does; the ids and element ids of the created nodes")
    public Stream<CreatedNodes> createNodes(@Name("nodes") List<Map<String, Object>> nodes,
                                            @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws)
            throws KernelException {
        Ops ops = new Ops(tx);
        int[] labels = {ops.label("Node")};
        int wsKey = ops.key("ws");
        Value wsValue = Values.of(Graph.ws(ws));
        int id = ops.key("id");
        int label = ops.key("label");
        int kind = ops.key("kind");
        List<String> ids = new ArrayList<>(nodes.size());
        List<String> eids = new ArrayList<>(nodes.size());
        for (Map<String, Object> n : nodes) {
            long x = ops.write.nodeCreateWithLabels(labels);
            ops.write.nodeSetProperty(x, wsKey, wsValue);
            set(ops.write, x, id, n.get("id"));
            set(ops.write, x, label, n.get("label"));
            set(ops.write, x, kind, n.get("kind"));
            ids.add((String) n.get("id"));
            eids.add(ops.elementId(x));
        }
        return Stream.of(new CreatedNodes(ids, eids));
    }

    @Procedure(name = "kg.createUnits", mode = Mode.WRITE)
    @Description("kg.createUnits(units, ws) :: (created) - CREATE (:Unit {ws, ...}) with its SUBJECT, ARG {pos} and "
            + "MOD {slot} edges to nodes given by element id, as cypher/ingest_units.cypher does")
    @SuppressWarnings("unchecked")
    public Stream<Created> createUnits(@Name("units") List<Map<String, Object>> units,
                                       @Name(value = "ws", defaultValue = "default", description = "the workspace (docs/workspaces.md)") String ws)
            throws KernelException {
        Ops ops = new Ops(tx);
        int[] labels = {ops.label("Unit")};
        int wsKey = ops.key("ws");
        Value wsValue = Values.of(Graph.ws(ws));
        int[] keys = new int[UNIT_KEYS.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = ops.key(UNIT_KEYS[i]);
        }
        int subject = ops.type("SUBJECT");
        int arg = ops.type("ARG");
        int mod = ops.type("MOD");
        int pos = ops.key("pos");
        int slot = ops.key("slot");
        long created = 0;
        for (Map<String, Object> u : units) {
            long x = ops.write.nodeCreateWithLabels(labels);
            ops.write.nodeSetProperty(x, wsKey, wsValue);
            for (int i = 0; i < keys.length; i++) {
                set(ops.write, x, keys[i], u.get(UNIT_KEYS[i]));
            }
            ops.write.relationshipCreate(x, subject, ops.node(u.get("subject")));
            for (Map<String, Object> a : (List<Map<String, Object>>) u.get("args")) {
                long r = ops.write.relationshipCreate(x, arg, ops.node(a.get("node")));
                setRel(ops.write, r, pos, a.get("pos"));
            }
            for (Map<String, Object> m : (List<Map<String, Object>>) u.get("mods")) {
                long r = ops.write.relationshipCreate(x, mod, ops.node(m.get("node")));
                setRel(ops.write, r, slot, m.get("slot"));
            }
            created++;
        }
        return Stream.of(new Created(created));
    }

    @Procedure(name = "kg.createRelations", mode = Mode.WRITE)
    @Description("kg.createRelations(rels) :: (created) - the node-to-node edges of a batch's units, typed by "
            + "kind upper-cased, ends given by element id, as cypher/ingest_relations.cypher does")
    public Stream<Created> createRelations(@Name("rels") List<Map<String, Object>> rels) throws KernelException {
        Ops ops = new Ops(tx);
        int kind = ops.key("kind");
        int family = ops.key("family");
        int unit = ops.key("unit");
        int live = ops.key("live");
        Map<String, Integer> types = new java.util.HashMap<>();
        long rows = 0;
        for (Map<String, Object> r : rels) {
            rows++;
            String k = (String) r.get("kind");
            if (!RELATION_KINDS.contains(k)) {
                continue;
            }
            Integer type = types.get(k);
            if (type == null) {
                type = ops.type(k.toUpperCase(java.util.Locale.ROOT));
                types.put(k, type);
            }
            long rel = ops.write.relationshipCreate(ops.node(r.get("src")), type, ops.node(r.get("dst")));
            setRel(ops.write, rel, kind, k);
            setRel(ops.write, rel, family, r.get("family"));
            setRel(ops.write, rel, unit, r.get("unit"));
            Object isLive = r.get("live");
            setRel(ops.write, rel, live, isLive == null ? Boolean.TRUE : isLive);
        }
        return Stream.of(new Created(rows));
    }

    private static void set(Write write, long node, int key, Object o) throws KernelException {
        Value v = value(o);
        if (v != null) {
            write.nodeSetProperty(node, key, v);
        }
    }

    private static void setRel(Write write, long rel, int key, Object o) throws KernelException {
        Value v = value(o);
        if (v != null) {
            write.relationshipSetProperty(rel, key, v);
        }
    }
}
