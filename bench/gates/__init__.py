"""Correctness gates checked on a run's tables after its last checkpoint (T17, DESIGN.md §11).

Each module checks one gate on every candidate it applies to and returns rows of the results'
``gates`` table (:mod:`runresults`): engine, gate, reader, passed (None: n/a, with the reason),
points checked, points failed and the deciding figure. Expected answers come from the workload's
ground truth per instant, never from our own view of the table.
"""
