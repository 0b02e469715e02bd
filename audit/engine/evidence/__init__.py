"""Every kind of evidence an audit can gather, behind one interface
(``base``): black-box event tests (``event_test``) and the white-box kinds,
per-round curves (``per_round``), worst-output search (``search``),
privacy-loss distributions (``pld``), certified event probabilities of a
declared scalar state model (``recursion``) and exact output probabilities
of a declared sparse vector, two sparse vectors in parallel or
report-noisy-max (``integral``, which builds the declared model's own
kind), and exact output laws found by replaying the code itself on chosen
uniform draws (``replay``), whose results share ``whitebox``.

``KINDS`` maps each ``--mode`` name to its class; ``applicable_modes`` says
which white-box kinds a scenario supports.
"""
from audit.engine.evidence.base import Evidence, EvidenceResult, alpha_per_share, collect
from audit.engine.evidence.event_test import EventTestEvidence, EventTestResult
from audit.engine.evidence.per_round import PerRoundEvidence
from audit.engine.evidence.integral import IntegralEvidence
from audit.engine.models.scalar_state.evidence import RecursionEvidence
from audit.engine.evidence.pld import LossDistributionEvidence
from audit.engine.evidence.search import SearchEvidence
from audit.engine.evidence.replay import ReplayEvidence
from audit.engine.evidence.whitebox import WHITE_MODES, WhiteBoxResult, applicable_modes

KINDS = {"black-box": EventTestEvidence, "per-round": PerRoundEvidence,
         "search": SearchEvidence, "pld": LossDistributionEvidence,
         "recursion": RecursionEvidence, "integral": IntegralEvidence,
         "replay": ReplayEvidence}
MODES = tuple(KINDS)
assert MODES[1:] == WHITE_MODES

__all__ = ["Evidence", "EvidenceResult", "EventTestEvidence", "EventTestResult",
           "IntegralEvidence", "ReplayEvidence",
           "KINDS", "LossDistributionEvidence", "MODES", "PerRoundEvidence", "RecursionEvidence",
           "SearchEvidence",
           "WHITE_MODES", "WhiteBoxResult", "alpha_per_share", "applicable_modes", "collect"]
