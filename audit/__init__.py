"""The auditing engine: simulation, estimators, verdicts, command line."""
__version__ = "0.1.0"
