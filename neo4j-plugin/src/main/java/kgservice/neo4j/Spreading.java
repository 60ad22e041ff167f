package kgservice.neo4j;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The spreading-activation formula of both engines (SpreadEngine, ResidentSpread), and the τ
 * table of a caller that passes none. A frontier node with energy e and d rows this hop passes
 * share(e, d, δ) * τ[kind] along each row: the expression of kgservice.stores.spreading.hop_share
 * and spread_step.cypher, in the same order, so an energy right at ε lands on the same side of it
 * on every backend.
 */
final class Spreading {
    /** Where the build puts kgservice/families/lexicon.json (pom.xml resources). */
    static final String LEXICON = "/kgservice/neo4j/lexicon.json";

    private Spreading() {
    }

    /** What a node with {@code energy} and {@code rows} rows this hop passes along each, before τ. */
    static double share(double energy, int rows, double degreeDamping) {
        return energy / Math.pow(Math.max(1, rows), degreeDamping);
    }

    private static volatile Map<String, Double> lexiconTau;

    /** τ of the spreading kinds as the built-in lexicon has them (the only table; the Python side passes its own). */
    static Map<String, Double> lexiconTau() {
        Map<String, Double> t = lexiconTau;
        if (t == null) {
            t = readLexiconTau();
            lexiconTau = t;
        }
        return t;
    }

    private static Map<String, Double> readLexiconTau() {
        try (InputStream in = Spreading.class.getResourceAsStream(LEXICON)) {
            if (in == null) {
                throw new IllegalArgumentException("this plugin jar was built without kgservice/families/lexicon.json: "
                        + "pass tau explicitly, e.g. {synonym: 0.9, belongs_to: 0.7, of: 0.5, content: 0.3, related_to: 0.2}");
            }
            JsonNode root = new ObjectMapper().readTree(in);
            Map<String, Double> t = new LinkedHashMap<>();
            for (String kind : Graph.SPREAD_KINDS) {
                // content's families sit under "content", the other kinds under "kinds" (Lexicon.merge)
                JsonNode spec = kind.equals("content") ? root.path("content") : root.path("kinds").path(kind);
                t.put(kind, spec.path("tau").asDouble(0.0));
            }
            return Map.copyOf(t);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the plugin's lexicon " + LEXICON + ": " + e.getMessage(), e);
        }
    }
}
