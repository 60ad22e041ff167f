"""graphify-compatible commands over the graph.json mirror.

``query``, ``path``, ``explain``, ``save-result`` and ``reflect`` read the same
``graphify-out/graph.json`` (networkx node_link data, edges under ``links`` or ``edges``)
that graphify's own CLI and agent skills read. The ``graphify`` console script
(dropin.py) reproduces graphify 0.9.96's CLI byte for byte, side effects included
(docs/graphify.md); the ``kg`` commands add what our mirror knows (synonym / belongs-to
links): cross-language query expansion without an LLM, ≡ classes in ``explain``.

Everything here is deliberately light to import: no networkx, no LLM client, no vector
store on these paths (start-up time is benchmarked against graphify's CLI).
"""

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_AMBIGUOUS = 3
EXIT_NOT_FOUND = 4
