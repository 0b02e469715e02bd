"""The report-noisy-max model, in one place: a mechanism that adds i.i.d.
Laplace or exponential noise of one scale to each of a round's K answers
and reports the index of the largest noisy answer or its value.

* the declaration: ``NoisyMaxModel`` (defined in
  ``algorithms.noisy_max_model``, which users import, re-exported here);
* its verification against the code: ``verify`` (``checks``: the declared
  model replayed on the code's own recorded draws);
* its exact evaluation: ``exact``, every index's probability as a
  certified one-dimensional integral over the winning value, and the
  value's density in closed form;
* its evidence kind: ``evidence`` (``NoisyMaxEvidence``, the ``integral``
  mode; imported by ``audit.engine.evidence``).
"""
from algorithms.noisy_max_model import NoisyMaxModel
from audit.engine.models.noisy_max.verify import checks, noisy_max_of

__all__ = ["NoisyMaxModel", "checks", "noisy_max_of"]
