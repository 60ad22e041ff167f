package kgservice.neo4j;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;

import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.common.EntityType;
import org.neo4j.exceptions.KernelException;
import org.neo4j.internal.kernel.api.IndexQueryConstraints;
import org.neo4j.internal.kernel.api.NodeCursor;
import org.neo4j.internal.kernel.api.NodeValueIndexCursor;
import org.neo4j.internal.kernel.api.PropertyIndexQuery;
import org.neo4j.internal.schema.IndexDescriptor;
import org.neo4j.internal.kernel.api.PropertyCursor;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.RelationshipTraversalCursor;
import org.neo4j.storageengine.api.PropertySelection;
import org.neo4j.storageengine.api.RelationshipSelection;
import org.neo4j.token.api.TokenConstants;
import org.neo4j.values.storable.BooleanValue;
import org.neo4j.values.storable.TextValue;

/**
 * The spreading graph held in the JVM heap: what SpreadEngine reads from the store on every
 * call (each :Node's distinct live (neighbour, kind) rows, its stored degree, its id), built
 * once per database and kept as primitive arrays, so a spread touches no store page and no
 * object per edge.
 *
 * <p>Layout. Nodes get dense indices 0..n-1; the {@code sortedCount} built at once are numbered
 * in the library's id order (code points), so sorting a frontier by id is sorting ints. Rows
 * are CSR: {@code rowStart[i * 5 + k]} .. {@code rowStart[i * 5 + k + 1]} index {@code rowTarget}
 * for kind k (alphabetical, Graph.SPREAD_KINDS); a row is a distinct neighbour over the live
 * edges of that kind (content: outgoing only), literals left out, exactly the rows
 * SpreadEngine collects. Ids are UTF-8 in one byte array.
 *
 * <p>Patches. A node whose edges changed after the build gets its rows re-read from the store
 * into {@code overlay[i]} ({@code [off_0..off_5, targets...]}); a node created after the
 * build is appended (index >= sortedCount, compared by its id string when sorting). Which nodes
 * to patch comes from the change log (ResidentSpread), never from guessing.
 */
final class ResidentGraph {
    static final int KINDS = Graph.SPREAD_KINDS.length;
    /** The (ws, id) uniqueness constraint's index (kgservice/stores/procedures/schema*.cypher). */
    static final String WS_ID_INDEX = "node_ws_id";
    private static final byte LITERAL = 1;

    // coherence key of the store state this graph reflects (see ResidentSpread)
    String epoch;
    long version;
    long[] relCounts;
    long[] wsCounts; // this workspace's share of relCounts when last checked (wsCounts())

    int n;
    int sortedCount;
    long[] nodeRef = new long[0];
    int[] denseOf = new int[0]; // internal node id -> dense index + 1 (0: not a :Node we know)
    byte[] idBytes = new byte[0];
    int[] idStart = new int[1];
    int idEnd;
    byte[] flags = new byte[0];
    int[] storedDegree = new int[0];
    int[] rowStart = new int[1];
    int[] rowTarget = new int[0];
    int[][] overlay = new int[0][];
    int overlaid;
    long buildMillis;
    long visited; // nodes the last build looked at to find its workspace's (workspaceNodes)
    long patches;
    long lastPatchMillis;
    int lastPatchNodes;

    // kernel access while building / patching (one transaction's cursors)
    private KernelReads kernel; // set while withCursors runs
    private Read read;
    private NodeCursor nc;
    private RelationshipTraversalCursor rc;
    private PropertyCursor props;
    private int idKey, liveKey, nodeLabel, wsKey;
    private String ws = "default"; // the workspace whose :Node nodes this graph holds
    private RelationshipSelection[] select;
    private int[] typeIds;
    private int[] stamp = new int[0];
    private int currentStamp;

    boolean isLiteral(int i) {
        return (flags[i] & LITERAL) != 0;
    }

    String id(int i) {
        return new String(idBytes, idStart[i], idStart[i + 1] - idStart[i], StandardCharsets.UTF_8);
    }

    int dense(long ref) {
        return ref >= 0 && ref < denseOf.length ? denseOf[(int) ref] - 1 : -1;
    }

    /** Row offsets of node i: targets of kind k are rows()[base + off[k]] .. [base + off[k+1]). */
    int[] overlayOf(int i) {
        return overlay[i];
    }

    long bytes() {
        long b = 8L * nodeRef.length + 4L * denseOf.length + idBytes.length + 4L * idStart.length + flags.length
                + 4L * storedDegree.length + 4L * rowStart.length + 4L * rowTarget.length + 8L * overlay.length;
        for (int i = 0; i < n; i++) {
            if (overlay[i] != null) {
                b += 16 + 4L * overlay[i].length;
            }
        }
        return b;
    }

    long rows() {
        long r = 0;
        for (int i = 0; i < n; i++) {
            int[] o = overlay[i];
            r += o != null ? o[KINDS] : rowStart[i * KINDS + KINDS] - rowStart[i * KINDS];
        }
        return r;
    }

    // -- kernel plumbing ---------------------------------------------------------------------

    interface Work<T> {
        T run();
    }

    /** Run {@code work} with cursors of the caller's transaction. */
    <T> T withCursors(Transaction tx, Work<T> work) {
        KernelReads k = kernel = new KernelReads(tx);
        read = k.read;
        idKey = k.idKey;
        liveKey = k.liveKey;
        wsKey = k.tokens.propertyKey("ws");
        nodeLabel = k.tokens.nodeLabel(Graph.NODE.name());
        typeIds = k.typeIds;
        select = Graph.spreadSelections(typeIds);
        try (NodeCursor nodeCursor = k.nodeCursor();
             RelationshipTraversalCursor relCursor = k.relationshipCursor();
             PropertyCursor propCursor = k.propertyCursor()) {
            nc = nodeCursor;
            rc = relCursor;
            props = propCursor;
            return work.run();
        } finally {
            nc = null;
            rc = null;
            props = null;
            read = null;
            kernel = null;
        }
    }

    /** Relationship counts of the five spreading types (the count store: O(1)); a guard that
     *  notices edges created or deleted behind the change log's back. */
    static long[] relCounts(Transaction tx) {
        KernelReads kr = new KernelReads(tx);
        long[] c = new long[KINDS];
        for (int k = 0; k < KINDS; k++) {
            int t = kr.typeIds[k];
            c[k] = t == TokenConstants.NO_TOKEN ? 0 : kr.read.countsForRelationship(TokenConstants.ANY_LABEL, t, TokenConstants.ANY_LABEL);
        }
        return c;
    }

    /** The count query of {@link #wsCounts}. {@code n.id IS NOT NULL} is what lets the planner
     *  seek the (ws, id) constraint's composite index by its first property; with {@code n.ws}
     *  alone it scans every :Node of every workspace (measured: scripts/bench/RESULTS.md, "The
     *  Neo4j plugin's resident graph with many workspaces"). Every :Node kgservice writes has an
     *  id (build skips one without); the edges of one made by hand without it are not counted. */
    static final String WS_COUNTS;

    static {
        StringBuilder q = new StringBuilder("MATCH (n:Node) WHERE n.ws = $ws AND n.id IS NOT NULL RETURN ");
        for (int k = 0; k < Graph.SPREAD_TYPES.length; k++) {
            q.append(k == 0 ? "" : ", ").append("sum(COUNT { (n)-[:`").append(Graph.SPREAD_TYPES[k].name())
                    .append("`]->() }) AS c").append(k);
        }
        WS_COUNTS = q.toString();
    }

    /** Relationship counts of the five spreading types (Graph.SPREAD_TYPES order, as
     *  {@link #relCounts}) leaving the {@code ws} workspace's :Node nodes: edges never cross a
     *  workspace, so these are that workspace's edges. One degree read per node (the count store
     *  keeps no counts per property), so it is asked only when the whole database's counts moved
     *  with no change logged in this workspace: another workspace's ingest, or a hand edit.
     *  The nodes are found through the (ws, id) uniqueness constraint's index, so the cost is
     *  this workspace's nodes, not the database's (see {@link #WS_COUNTS}). */
    static long[] wsCounts(Transaction tx, String ws) {
        long[] c = new long[KINDS];
        try (var result = tx.execute(WS_COUNTS, java.util.Map.of("ws", ws))) {
            if (result.hasNext()) {
                var row = result.next();
                for (int k = 0; k < KINDS; k++) {
                    Object v = row.get("c" + k);
                    c[k] = v instanceof Number num ? num.longValue() : 0L;
                }
            }
        }
        return c;
    }

    /** A generous estimate of the graph's heap (plus one call's work arrays) from the count
     *  store, checked before the first build so a server too small for it keeps walking. */
    static long estimateBytes(Transaction tx) {
        KernelReads k = new KernelReads(tx);
        int label = k.tokens.nodeLabel(Graph.NODE.name());
        long nodes = label == TokenConstants.NO_TOKEN ? 0 : k.read.countsForNode(label);
        long rels = 0;
        for (long c : relCounts(tx)) {
            rels += c;
        }
        long all = k.read.countsForNode(TokenConstants.ANY_LABEL);
        // per node: ref 8, flags 1, degree 4, 5 row offsets 20, overlay slot 8, id ~40, stamp 4, work 25;
        // denseOf over every node id; two rows per edge at most; a build's temporary id strings
        return nodes * (110 + 90) + all * 5 + rels * 8;
    }

    // -- build -------------------------------------------------------------------------------

    /** Every :Node and its rows, read in the caller's transaction. */
    static ResidentGraph build(Transaction tx, String ws) {
        long t0 = System.nanoTime();
        ResidentGraph g = new ResidentGraph();
        g.ws = ws;
        g.withCursors(tx, () -> {
            g.buildNodes();
            g.buildRows();
            return null;
        });
        g.buildMillis = (System.nanoTime() - t0) / 1_000_000;
        return g;
    }

    private void buildNodes() {
        long[] refs = new long[1 << 16];
        String[] ids = new String[1 << 16];
        int count = 0;
        long maxRef = -1;
        if (nodeLabel != TokenConstants.NO_TOKEN) {
            for (long ref : workspaceNodes()) {
                read.singleNode(ref, nc);
                if (!nc.next()) {
                    continue;
                }
                String id = readId();
                if (id == null) {
                    continue; // a :Node without an id is nothing the library can name
                }
                if (count == refs.length) {
                    refs = Arrays.copyOf(refs, count * 2);
                    ids = Arrays.copyOf(ids, count * 2);
                }
                refs[count] = nc.nodeReference();
                ids[count++] = id;
                maxRef = Math.max(maxRef, nc.nodeReference());
            }
        }
        Integer[] order = new Integer[count];
        for (int i = 0; i < count; i++) {
            order[i] = i;
        }
        final String[] idsF = ids;
        Arrays.sort(order, (a, b) -> Graph.CODEPOINT_ORDER.compare(idsF[a], idsF[b]));
        int cap = Math.max(16, count + count / 8);
        nodeRef = new long[cap];
        flags = new byte[cap];
        storedDegree = new int[cap];
        idStart = new int[cap + 1];
        overlay = new int[cap][];
        denseOf = new int[(int) Math.max(16, maxRef + 1 + (maxRef + 1) / 8)];
        byte[][] utf8 = new byte[count][];
        long total = 0;
        for (int i = 0; i < count; i++) {
            utf8[i] = ids[order[i]].getBytes(StandardCharsets.UTF_8);
            total += utf8[i].length;
        }
        idBytes = new byte[(int) Math.min(Integer.MAX_VALUE - 16, total + total / 8 + 16)];
        for (int i = 0; i < count; i++) {
            int o = order[i];
            nodeRef[i] = refs[o];
            denseOf[(int) refs[o]] = i + 1;
            idStart[i] = idEnd;
            System.arraycopy(utf8[i], 0, idBytes, idEnd, utf8[i].length);
            idEnd += utf8[i].length;
            idStart[i + 1] = idEnd;
            if (ids[o].startsWith(Graph.LITERAL_PREFIX)) {
                flags[i] |= LITERAL;
            }
        }
        n = count;
        sortedCount = count;
        stamp = new int[cap];
    }

    /** The references of this workspace's :Node nodes. Sought in the (ws, id) uniqueness
     *  constraint's index (kgservice's schema makes it), so a build reads its own workspace's
     *  nodes, not the database's; a database without that index (an in-process test one) has
     *  every node scanned. {@link #visited} counts the nodes looked at. */
    private long[] workspaceNodes() {
        long[] refs = new long[1 << 12];
        int count = 0;
        visited = 0;
        NodeValueIndexCursor seek = seekWorkspace();
        if (seek != null) {
            try (seek) {
                while (seek.next()) {
                    visited++;
                    if (count == refs.length) {
                        refs = Arrays.copyOf(refs, count * 2);
                    }
                    refs[count++] = seek.nodeReference();
                }
            }
            return Arrays.copyOf(refs, count);
        }
        read.allNodesScan(nc);
        while (nc.next()) {
            visited++;
            if (nc.hasLabel(nodeLabel) && inWorkspace()) {
                if (count == refs.length) {
                    refs = Arrays.copyOf(refs, count * 2);
                }
                refs[count++] = nc.nodeReference();
            }
        }
        return Arrays.copyOf(refs, count);
    }

    /** A seek of the (ws, id) index for this workspace (every id), or null without the index. */
    private NodeValueIndexCursor seekWorkspace() {
        if (wsKey == TokenConstants.NO_TOKEN || idKey == TokenConstants.NO_TOKEN) {
            return null;
        }
        IndexDescriptor index = kernel.ktx.schemaRead().indexGetForName(WS_ID_INDEX);
        if (index == null || index == IndexDescriptor.NO_INDEX || index.schema().entityType() != EntityType.NODE
                || !Arrays.equals(index.schema().getEntityTokenIds(), new int[] {nodeLabel})
                || !Arrays.equals(index.schema().getPropertyIds(), new int[] {wsKey, idKey})) {
            return null;
        }
        NodeValueIndexCursor cursor = kernel.ktx.cursors().allocateNodeValueIndexCursor(
                kernel.ktx.cursorContext(), kernel.ktx.memoryTracker());
        try {
            read.nodeIndexSeek(kernel.ktx.queryContext(), read.indexReadSession(index), cursor,
                    IndexQueryConstraints.unconstrained(), PropertyIndexQuery.exact(wsKey, ws),
                    PropertyIndexQuery.exists(idKey));
            return cursor;
        } catch (KernelException e) {
            cursor.close(); // not online (being built): scan instead
            return null;
        }
    }

    /** Whether the node under the cursor belongs to this graph's workspace (edges never cross one). */
    private boolean inWorkspace() {
        if (wsKey == TokenConstants.NO_TOKEN) {
            return false;
        }
        nc.properties(props, PropertySelection.selection(wsKey));
        return props.next() && props.propertyValue() instanceof TextValue text && ws.equals(text.stringValue());
    }

    private String readId() {
        nc.properties(props, PropertySelection.selection(idKey));
        if (props.next() && props.propertyValue() instanceof TextValue text) {
            return text.stringValue();
        }
        return null;
    }

    private void buildRows() {
        int[] start = new int[n * KINDS + 1];
        int[] targets = new int[Math.max(16, n * 2)];
        int size = 0;
        int[] buf = new int[64];
        for (int i = 0; i < n; i++) {
            read.singleNode(nodeRef[i], nc);
            if (!nc.next()) {
                for (int k = 0; k < KINDS; k++) {
                    start[i * KINDS + k + 1] = size;
                }
                continue;
            }
            storedDegree[i] = storedDegree();
            for (int k = 0; k < KINDS; k++) {
                int got = kindRows(k, buf);
                if (got > buf.length) {
                    buf = new int[got * 2];
                    got = kindRows(k, buf);
                }
                if (size + got > targets.length) {
                    targets = Arrays.copyOf(targets, Math.max(size + got, targets.length + targets.length / 2));
                }
                System.arraycopy(buf, 0, targets, size, got);
                size += got;
                start[i * KINDS + k + 1] = size;
            }
        }
        rowStart = start;
        rowTarget = Arrays.copyOf(targets, size);
    }

    /** The distinct live neighbours of the positioned node over kind k (SpreadEngine's rows);
     *  returns how many, filling {@code out} as far as it reaches (call again with a bigger one). */
    private int kindRows(int k, int[] out) {
        if (select[k] == null) {
            return 0;
        }
        int st = ++currentStamp;
        int got = 0;
        nc.relationships(rc, select[k]);
        while (rc.next()) {
            int m = denseOrAppend(rc.otherNodeReference());
            if (m < 0 || stamp[m] == st || (flags[m] & LITERAL) != 0) {
                continue;
            }
            rc.properties(props, PropertySelection.selection(liveKey));
            if (!(props.next() && props.propertyValue() instanceof BooleanValue live && live.booleanValue())) {
                continue;
            }
            stamp[m] = st;
            if (got < out.length) {
                out[got] = m;
            }
            got++;
        }
        if (got > out.length) {
            currentStamp++; // the caller re-reads with a bigger buffer: a fresh stamp
        }
        return got;
    }

    private int storedDegree() {
        return Graph.spreadDegree(nc, typeIds);
    }

    // -- patches -------------------------------------------------------------------------------

    private ArrayDeque<Integer> appended;

    /** The dense index of a :Node by internal id, appending it if it is one we have not seen
     *  (a node created after the build); -1 for anything that is not a :Node. Needs nc free:
     *  uses its own cursor position only through readIdOf. */
    private int denseOrAppend(long ref) {
        int d = dense(ref);
        if (d >= 0 || appended == null) {
            return d; // while building every :Node is known: the rest are not spreading nodes
        }
        String id = idOfNodeRef(ref);
        if (id == null) {
            return -1;
        }
        d = append(ref, id);
        appended.add(d);
        return d;
    }

    private NodeCursor side;
    private PropertyCursor sideProps;

    private String idOfNodeRef(long ref) {
        read.singleNode(ref, side);
        if (!side.next() || !side.hasLabel(nodeLabel)) {
            return null;
        }
        side.properties(sideProps, PropertySelection.selection(idKey));
        if (sideProps.next() && sideProps.propertyValue() instanceof TextValue text) {
            return text.stringValue();
        }
        return null;
    }

    private int append(long ref, String id) {
        if (n == nodeRef.length) {
            int cap = n + n / 2 + 16;
            nodeRef = Arrays.copyOf(nodeRef, cap);
            flags = Arrays.copyOf(flags, cap);
            storedDegree = Arrays.copyOf(storedDegree, cap);
            idStart = Arrays.copyOf(idStart, cap + 1);
            overlay = Arrays.copyOf(overlay, cap);
            stamp = Arrays.copyOf(stamp, cap);
        }
        if (ref >= denseOf.length) {
            denseOf = Arrays.copyOf(denseOf, (int) Math.max(ref + 1, denseOf.length + denseOf.length / 2));
        }
        byte[] b = id.getBytes(StandardCharsets.UTF_8);
        if (idEnd + b.length > idBytes.length) {
            idBytes = Arrays.copyOf(idBytes, Math.max(idEnd + b.length, idBytes.length + idBytes.length / 2));
        }
        int i = n++;
        nodeRef[i] = ref;
        denseOf[(int) ref] = i + 1;
        System.arraycopy(b, 0, idBytes, idEnd, b.length);
        idStart[i] = idEnd;
        idEnd += b.length;
        idStart[i + 1] = idEnd;
        flags[i] = id.startsWith(Graph.LITERAL_PREFIX) ? LITERAL : 0;
        overlay[i] = new int[KINDS + 1]; // no rows until read
        overlaid++;
        return i;
    }

    /**
     * Re-read the rows of the nodes with these ids (the change log's touched ids) in the caller's
     * transaction, appending nodes the graph has not seen. Returns false when a node the graph
     * knows is gone (deleted): the caller rebuilds, as rows elsewhere may point at it.
     */
    boolean patch(Transaction tx, Iterable<String> touched) {
        long t0 = System.nanoTime();
        return withCursors(tx, () -> {
            try (NodeCursor s = kernel.nodeCursor(); PropertyCursor sp = kernel.propertyCursor()) {
                side = s;
                sideProps = sp;
                appended = new ArrayDeque<>();
                ArrayDeque<Integer> todo = new ArrayDeque<>();
                for (String id : touched) {
                    Node node = Graph.node(tx, id);
                    if (node == null) {
                        continue; // never a :Node (or one we never had): nothing to patch
                    }
                    int d = denseOrAppend(node.getId());
                    if (d >= 0) {
                        todo.add(d);
                    }
                }
                // nodes the store no longer has: rows elsewhere may point at them
                for (int d : todo) {
                    read.singleNode(nodeRef[d], nc);
                    if (!nc.next() || !nc.hasLabel(nodeLabel)) {
                        return false;
                    }
                }
                appended.clear();
                java.util.BitSet done = new java.util.BitSet();
                while (!todo.isEmpty() || !appended.isEmpty()) {
                    int d = !todo.isEmpty() ? todo.poll() : appended.poll();
                    if (done.get(d)) {
                        continue;
                    }
                    done.set(d);
                    if (!reread(d)) {
                        return false;
                    }
                }
                patches++;
                lastPatchNodes = done.cardinality();
                lastPatchMillis = (System.nanoTime() - t0) / 1_000_000;
                return true;
            } finally {
                side = null;
                sideProps = null;
                appended = null;
            }
        });
    }

    private boolean reread(int d) {
        read.singleNode(nodeRef[d], nc);
        if (!nc.next()) {
            return false;
        }
        storedDegree[d] = storedDegree();
        int[] buf = new int[KINDS + 1 + 16];
        int size = 0;
        int[] kindBuf = new int[64];
        for (int k = 0; k < KINDS; k++) {
            buf[k] = size;
            int got = kindRows(k, kindBuf);
            if (got > kindBuf.length) {
                kindBuf = new int[got * 2];
                got = kindRows(k, kindBuf);
            }
            if (KINDS + 1 + size + got > buf.length) {
                buf = Arrays.copyOf(buf, KINDS + 1 + (size + got) * 2);
            }
            System.arraycopy(kindBuf, 0, buf, KINDS + 1 + size, got);
            size += got;
        }
        buf[KINDS] = size;
        if (overlay[d] == null) {
            overlaid++;
        }
        overlay[d] = Arrays.copyOf(buf, KINDS + 1 + size);
        return true;
    }
}
