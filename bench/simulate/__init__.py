"""The simulator: the designs on a metadata-only table, driven by the same scenarios and planners."""

from bench.simulate.calibrate import calibrate
from bench.simulate.replace_metadata import replace_metadata_scaling
from bench.simulate.simulator import simulate

__all__ = ["calibrate", "replace_metadata_scaling", "simulate"]
