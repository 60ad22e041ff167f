package kgservice.neo4j;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import org.neo4j.graphdb.Transaction;

/**
 * A node named as the CLI names it: by its id, or by its label in any case or width. The
 * normalisation is kgservice/ids.py node_id (NFKC, case-fold, inner whitespace collapsed,
 * ends stripped, the `ent:` escape for an id that would read as a literal's), so
 * kg.synonymClass('Python') lands where `kg expand Python` does.
 */
final class NodeIds {
    private static final String LITERAL_PREFIX = "lit:";
    private static final String ENTRY_ESCAPE = "ent:";
    // Python's \s on str: Unicode White_Space plus the information separators U+001C..U+001F
    private static final Pattern WS = Pattern.compile("[\\s\\x1c-\\x1f\\x85]+", Pattern.UNICODE_CHARACTER_CLASS);

    private NodeIds() {
    }

    /** Full case folding as Python's str.casefold for the scripts the corpus uses: upper then lower case
     *  (ß -> ss, final ς -> σ), in the root locale so no Turkish dotless-i rule applies. */
    static String normalise(String label) {
        String text = Normalizer.normalize(label, Normalizer.Form.NFKC);
        text = text.toUpperCase(Locale.ROOT).toLowerCase(Locale.ROOT);
        return WS.matcher(text).replaceAll(" ").strip();
    }

    static String nodeId(String label) {
        String id = normalise(label);
        return id.startsWith(LITERAL_PREFIX) || id.startsWith(ENTRY_ESCAPE) ? ENTRY_ESCAPE + id : id;
    }

    /** The id of the node the text names: itself when a node has that id, else its normalised form
     *  when a node has that one; otherwise the text unchanged (an id the library passes, a literal's
     *  included, answers as before: an unknown node with itself / nothing). */
    static String resolve(Transaction tx, String given) {
        if (given == null || Graph.node(tx, given) != null) {
            return given;
        }
        String id = nodeId(given);
        return Graph.node(tx, id) != null ? id : given;
    }

    static List<String> resolveAll(Transaction tx, List<String> given) {
        List<String> out = new ArrayList<>();
        for (String g : given) {
            String id = resolve(tx, g);
            if (!out.contains(id)) {
                out.add(id);
            }
        }
        return out;
    }
}
