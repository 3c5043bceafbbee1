"""``tiny_append``: a small engine kind of the registry test (tests/test_engine_kinds.py).

APPEND writes sorted by service, never maintained. It is a package of its own (``engine.py``,
``sim.py``) and one registry entry, added and removed by the test: what adding an engine costs.
"""
