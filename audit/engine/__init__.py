"""The audit engine, as a pipeline: ``scenarios`` (the attacks' neighbouring
pairs, checked with ``contract``) → ``models`` (white-box claims of an
algorithm checked before use) → ``sampling`` (requests through the one
executor) → ``evidence`` (every kind behind one interface, with
``privacy_loss`` for the exact losses) → ``bounds`` (Clopper–Pearson and ε
lower bounds) → ``verdict`` (``AuditResult``).  ``audit`` drives one audit;
``regret`` estimates regret.  Imports ``algorithms``, ``attacks`` and
``audit.execution``, never the report or the command line.

``audit_algorithm`` and ``AuditResult`` are the entry points."""
from audit.engine.audit import audit_algorithm, audit_scenarios, reproduce_command
from audit.engine.verdict import AuditResult

__all__ = ["AuditResult", "audit_algorithm", "audit_scenarios", "reproduce_command"]
