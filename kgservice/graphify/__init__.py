"""graphify-compatible commands over the graph.json mirror.

``query``, ``path``, ``explain``, ``save-result`` and ``reflect`` read the same
``graphify-out/graph.json`` (networkx node_link data, edges under ``links`` or ``edges``)
that graphify's own CLI and agent skills read, print the same line formats and use the
same exit codes (0 answered, 3 ambiguous name, 4 no matching node), so existing users
and skills keep working. Where our mirror knows more (synonym / belongs-to links,
units) the commands use it: cross-language query expansion without an LLM, every
stored relation per hop, ≡ classes in ``explain``.

Everything here is deliberately light to import: no networkx, no LLM client, no vector
store on these paths (start-up time is benchmarked against graphify's CLI).
"""

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_AMBIGUOUS = 3
EXIT_NOT_FOUND = 4
