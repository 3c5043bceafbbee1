"""Continuous ingestion: Spark Structured Streaming in front of the same engines (DESIGN.md §10).

- ``landing``: the landing folder the generator drops the scenario's batches into, at the
  stream's cadence (byte-identical to the batch mode's batches), plus the bad inputs;
- ``sink``: the ``foreachBatch`` writer — schema check and quarantine, exactly-once through the
  checkpoint and the batch id in the table's commit metadata, late-row count, one micro-batch row;
- ``services``: each design's table services beside the live stream;
- ``driver``: one streaming run of one engine (landing -> readStream -> foreachBatch -> engine),
  with the lag sampler; ``ratesearch``: the sustainable-throughput search; ``run``: the
  ``layoutbench stream`` results folder; ``child`` / ``killtest``: SIGKILL and restart.
"""
