"""``python -m graphify``: kgservice's drop-in for graphify's CLI (graphifyy 0.9.96).

graphify's agent skills run ``$(cat graphify-out/.graphify_python) -m graphify <command>``;
this package makes that work in kgservice's environment. It holds no code of its own: the
commands live in ``kgservice.graphify`` (see ``kgservice/graphify/dropin.py``). Installing
graphifyy into the same environment would replace this package and the ``graphify``
script, which is why the reference graphify used by the tests lives in its own venv.
"""

__version__ = "0.9.96"
