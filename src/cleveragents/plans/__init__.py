"""Plans: actions, plans and their lifecycle, decisions (the structural tree and the
influence DAG), corrections and invariants, all stored as graph data through the commit
engine. The ``Actor`` protocol (actor.py) is what actors/ implements; ``record_decision``
(tools.py) is registered into the tool router so every actor records decisions the same way.

This package sits above graph/, context/, sandbox/ and tools/ and below actors/ and
services/: it takes a ``Writer`` (a store and its one commit path) from its caller.
"""
