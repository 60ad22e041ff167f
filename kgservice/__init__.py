"""kgservice: a knowledge service over a cognitive graph of units.

The package is laid out by architectural layer: ``model`` and ``ids`` (the data model),
``notation`` (unit text <-> units), ``families`` (predicate lexicon), ``stores`` (graph
backends), ``vectors`` (embeddings + Qdrant), ``expansion`` (no-LLM traversal), ``export``
(graph.json), ``cli`` (the ``kg`` command).
"""

__version__ = "0.1.0"
