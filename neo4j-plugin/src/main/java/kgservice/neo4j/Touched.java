package kgservice.neo4j;

import java.util.Arrays;

/**
 * The nodes that received energy in the current hop, for both spread engines (the per-call
 * store walk and the resident graph). A node's first touch in a hop zeroes its incoming energy
 * and lists it, so the end of the hop visits only what the hop reached and resets it sparsely.
 * Additions land in the order the caller makes them, which fixes the floating-point sum: both
 * engines add in the library's order (docs/spreading.md), so their energies stay bit-equal.
 */
final class Touched {
    /** The flag bit a touched node carries until the caller clears it at the end of the hop. */
    static final byte BIT = 8;

    int[] nodes;
    int size;

    Touched(int capacity) {
        nodes = new int[capacity];
    }

    /** Node {@code m} receives {@code energy} this hop. */
    void add(byte[] flags, double[] incoming, int m, double energy) {
        if ((flags[m] & BIT) == 0) {
            flags[m] |= BIT;
            incoming[m] = 0.0;
            if (size == nodes.length) {
                nodes = Arrays.copyOf(nodes, size * 2);
            }
            nodes[size++] = m;
        }
        incoming[m] = incoming[m] + energy;
    }
}
