"""The scenario's error, apart from the scenario's model so that the modules its validation calls
(:mod:`bench.engine_config`) raise it without importing the model."""


class ScenarioError(ValueError):
    """A scenario file with problems; the message lists all of them."""
