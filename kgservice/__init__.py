"""kgservice: a knowledge service over a cognitive graph of units.

Start at :class:`kgservice.service.KnowledgeBase`, the library's front door: one method per
``kg`` command. The design is in ``docs/DESIGN.md``. Packages by layer, ground floor first:
``model`` and ``ids`` (the data model), ``config`` and ``errors``, ``notation`` (unit text <->
units), ``families`` (predicate lexicon), ``stores`` (graph backends and their Cypher
procedures), ``vectors`` (embedders and vector stores), ``llm`` (litellm client, offline
providers), ``expansion`` (no-LLM traversal), ``extraction`` (text -> units), ``caches``,
``drilldown`` and ``answer`` (the LLM steps of a query), ``pipeline`` (text ingest, ask),
``export`` (graph.json), ``admin`` (doctor, dump/restore), ``service`` (the front door),
``graphify`` (graphify-compatible commands over graph.json, standalone) and ``cli`` (every
``kg`` command; nothing outside it and the server imports it).
"""

__version__ = "0.1.0"
