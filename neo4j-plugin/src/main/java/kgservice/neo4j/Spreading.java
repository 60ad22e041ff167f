package kgservice.neo4j;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The spreading-activation formula of both engines (SpreadEngine, ResidentSpread), and the τ
 * table, hub damping and seed backflow of a caller that passes none (the lexicon's, as the
 * service's defaults are). A frontier node with energy e and d rows this hop passes
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

    /** What the built-in lexicon says about spreading: τ per kind and the {@code spread} block. */
    private record LexiconSpread(Map<String, Double> tau, double degreeDamping, boolean seedBackflow) {
    }

    private static volatile LexiconSpread lexicon;

    /** τ of the spreading kinds as the built-in lexicon has them (the only table; the Python side passes its own). */
    static Map<String, Double> lexiconTau() {
        return lexicon().tau();
    }

    /** The lexicon's hub damping δ, the default of KnowledgeBase.spread_params() (0.0 when the block is absent, as there). */
    static double lexiconDegreeDamping() {
        return lexicon().degreeDamping();
    }

    /** The lexicon's seed backflow, the default of KnowledgeBase.spread_params() (true when the block is absent, as there). */
    static boolean lexiconSeedBackflow() {
        return lexicon().seedBackflow();
    }

    private static LexiconSpread lexicon() {
        LexiconSpread l = lexicon;
        if (l == null) {
            l = readLexicon();
            lexicon = l;
        }
        return l;
    }

    private static LexiconSpread readLexicon() {
        try (InputStream in = Spreading.class.getResourceAsStream(LEXICON)) {
            if (in == null) {
                throw new IllegalArgumentException("this plugin jar was built without kgservice/families/lexicon.json: "
                        + "pass tau, degreeDamping and seedBackflow explicitly, e.g. "
                        + "{synonym: 0.9, belongs_to: 0.7, of: 0.5, content: 0.3, related_to: 0.2}, 0.5, false");
            }
            JsonNode root = new ObjectMapper().readTree(in);
            Map<String, Double> t = new LinkedHashMap<>();
            for (String kind : Graph.SPREAD_KINDS) {
                // content's families sit under "content", the other kinds under "kinds" (Lexicon.merge)
                JsonNode spec = kind.equals("content") ? root.path("content") : root.path("kinds").path(kind);
                t.put(kind, spec.path("tau").asDouble(0.0));
            }
            JsonNode spread = root.path("spread");
            return new LexiconSpread(Map.copyOf(t), spread.path("degree_damping").asDouble(0.0),
                    spread.path("seed_backflow").asBoolean(true));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the plugin's lexicon " + LEXICON + ": " + e.getMessage(), e);
        }
    }
}
