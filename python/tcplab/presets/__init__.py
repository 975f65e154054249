"""Generators of the time series that drive changing links (docs/models/schedules.md):
mahimahi delivery traces (`traces`)."""
