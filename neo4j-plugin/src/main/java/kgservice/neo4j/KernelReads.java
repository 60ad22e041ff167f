package kgservice.neo4j;

import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.NodeCursor;
import org.neo4j.internal.kernel.api.PropertyCursor;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.RelationshipTraversalCursor;
import org.neo4j.internal.kernel.api.TokenRead;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;

/**
 * A procedure transaction's kernel read API and the tokens the spreading code looks up, for
 * the cursor walks of ResidentGraph and SpreadEngine: the core API's Node objects cost a lookup
 * and an allocation per step, the kernel's cursors neither. Cursors come from the transaction's
 * pool and must be closed (try-with-resources) before the transaction ends.
 */
final class KernelReads {
    final KernelTransaction ktx;
    final Read read;
    final TokenRead tokens;
    /** property key ids of {@code id} and {@code live} (NO_TOKEN while no such property exists) */
    final int idKey;
    final int liveKey;
    /** relationship type ids of Graph.SPREAD_TYPES, in order */
    final int[] typeIds;

    KernelReads(Transaction tx) {
        ktx = ((InternalTransaction) tx).kernelTransaction();
        read = ktx.dataRead();
        tokens = ktx.tokenRead();
        idKey = tokens.propertyKey("id");
        liveKey = tokens.propertyKey("live");
        typeIds = Graph.spreadTypeIds(tokens);
    }

    NodeCursor nodeCursor() {
        return ktx.cursors().allocateNodeCursor(ktx.cursorContext(), ktx.memoryTracker());
    }

    RelationshipTraversalCursor relationshipCursor() {
        return ktx.cursors().allocateRelationshipTraversalCursor(ktx.cursorContext(), ktx.memoryTracker());
    }

    PropertyCursor propertyCursor() {
        return ktx.cursors().allocatePropertyCursor(ktx.cursorContext(), ktx.memoryTracker());
    }
}
