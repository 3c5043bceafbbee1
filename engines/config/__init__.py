"""Configuration, once: every key an engine takes (:mod:`engines.config.registry`), the parsers of
its values (:mod:`engines.config.parsers`) and the docs table generated from them
(:mod:`engines.config.docs`). Pure: no Spark, no I/O; every engine imports it."""
