package kgservice.neo4j;

import java.util.Arrays;

/** Open-addressing map from a non-negative long (a node's internal id) to an int slot;
 *  a spread touches up to a few hundred thousand nodes, boxed HashMap keys cost more than the walk. */
final class LongIntMap {
    private static final long EMPTY = -1L;
    private long[] keys;
    private int[] values;
    private int size;
    private int mask;

    LongIntMap(int expected) {
        int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        keys = new long[cap];
        Arrays.fill(keys, EMPTY);
        values = new int[cap];
        mask = cap - 1;
    }

    private static int hash(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /** The value for k, or -1. */
    int get(long k) {
        int i = hash(k) & mask;
        while (true) {
            long x = keys[i];
            if (x == k) {
                return values[i];
            }
            if (x == EMPTY) {
                return -1;
            }
            i = (i + 1) & mask;
        }
    }

    void put(long k, int v) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int i = hash(k) & mask;
        while (true) {
            long x = keys[i];
            if (x == k) {
                values[i] = v;
                return;
            }
            if (x == EMPTY) {
                keys[i] = k;
                values[i] = v;
                size++;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    private void grow() {
        long[] ok = keys;
        int[] ov = values;
        keys = new long[ok.length * 2];
        Arrays.fill(keys, EMPTY);
        values = new int[ok.length * 2];
        mask = keys.length - 1;
        size = 0;
        for (int i = 0; i < ok.length; i++) {
            if (ok[i] != EMPTY) {
                put(ok[i], ov[i]);
            }
        }
    }
}
