"""Private online-learning algorithms, written against one vectorised
interface (``algorithms.core``), one module family per paper."""
from .core import Algorithm, Claim, Learner, sample_categorical
from .registry import REGISTRY, build

__all__ = ["Algorithm", "Claim", "Learner", "sample_categorical", "REGISTRY", "build"]
