"""The Delta Lake peer: the same scenario on a Delta table written and maintained by delta-rs."""
