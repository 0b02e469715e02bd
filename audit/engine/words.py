"""How an audit speaks of what it audits, in the algorithm's own terms.

A learner plays arms (or chooses experts, or plays points) over rounds of
losses; a mechanism over a stream of query answers
(``Learner.feedback == "stream"``: the DP testers' mechanisms, continual
counters, a function audited as written) reads answers and releases an
output code a round, and maybe numbers.  The summary, the result document
and the report use these words, so a mechanism is never described with
horizons, arms, losses or inner learners.

Output codes.  Events name an output code the way arms are named: 1-based
(``I_3 = 2`` is the second code at round 3, as it is arm 2 of a learner),
in every kind of event, whole sequences included.  Where the mechanism says
what its codes stand for — ``Algorithm.extra["code_labels"]`` (the values a
function audited as written returned, or a registered mechanism's own), a
declared sparse vector (⊥, ⊤, – for aborted), two in parallel — events are
shown with those labels instead (``I_3 = ⊤``, ``I = (⊥⊥⊤––)``), in the
summary, the report and the result document alike (``event_label``).

May import: ``algorithms``.
"""
from __future__ import annotations

import numbers
import re
from typing import Optional

from algorithms.core import Algorithm
from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW, ParallelSparseVectors, \
    SparseVectorModel

# What a sparse vector's codes stand for (the integral evidence writes its
# outputs with the same glyphs).
SPARSE_VECTOR_LABELS = {BELOW: "⊥", ABOVE: "⊤", ABORTED: "–"}
SPARSE_VECTOR_LEGEND = "⊥ below, ⊤ above the threshold, – aborted"

# Said where the deciding event reads a number's floating-point grain.
FLOAT_NOTE = ("the deciding event reads which doubles the code outputs (the power of two of "
              "their least significant bit): rounding in floating point lets the two inputs "
              "reach different doubles (Mironov, CCS 2012), so the claim fails for the code as "
              "it runs in doubles, whatever holds for its mechanism over the reals")



def is_mechanism(alg: Algorithm) -> bool:
    """A mechanism over a stream of answers (each round reads its row, then
    releases), not a learner."""
    return bool(alg.learner.reads_first) and not (
        isinstance(alg.extra, dict) and alg.extra.get("environment"))


def plays_points(alg: Algorithm) -> bool:
    """A learner whose output is a point of a domain (its K is a dimension)."""
    params = alg.params or {}
    return (not is_mechanism(alg) and alg.learner.point is not None
            and ("domain" in params or "n" in params))


def code_labels(alg: Algorithm) -> Optional[list[str]]:
    """What each output code of a mechanism stands for (code c, 0-based, is
    ``labels[c]``), or None when it does not say (codes are then shown
    1-based, like arms)."""
    if not is_mechanism(alg):
        return None
    extra = alg.extra or {}
    labels = extra.get("code_labels")
    if labels:
        return [str(x) for x in labels]
    n = int(alg.learner.n_arms)
    sv = extra.get("sparse_vector")
    if isinstance(sv, SparseVectorModel):
        return [SPARSE_VECTOR_LABELS.get(c, str(c + 1)) for c in range(n)]
    par = extra.get("parallel_sparse_vectors")
    if isinstance(par, ParallelSparseVectors):
        base = int(par.codes)
        return [SPARSE_VECTOR_LABELS.get(c // base, "?") + SPARSE_VECTOR_LABELS.get(c % base, "?")
                for c in range(n)]
    return None


def code_legend(alg: Algorithm) -> Optional[str]:
    """One phrase saying what the labels mean, where they are glyphs."""
    extra = alg.extra or {}
    if isinstance(extra.get("sparse_vector"), SparseVectorModel):
        return SPARSE_VECTOR_LEGEND
    if isinstance(extra.get("parallel_sparse_vectors"), ParallelSparseVectors):
        return (f"{SPARSE_VECTOR_LEGEND}; two glyphs a round: the first mechanism's, "
                f"then the second's")
    return None


def _unit(alg: Algorithm) -> str:
    """What a mechanism's inputs are called: query answers (the testers'
    mechanisms, functions of an array of answers), or the inputs of a
    stream class, one a round."""
    extra = alg.extra if isinstance(alg.extra, dict) else {}
    return extra.get("inputs_word") or "answer"


def _plural(n: int, one: str, many: Optional[str] = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _range(alg: Algorithm) -> str:
    lo, hi = alg.loss_range
    return f"[{lo:g}, {hi:g}]".replace("-", "−")


def setting(alg: Algorithm) -> str:
    """What the algorithm reads and releases, in a few words: ``T = 1,000
    rounds, K = 2 arms`` for a learner, ``a mechanism over 10 answers, each
    in [−10, 10]`` for a mechanism."""
    T, K = int(alg.horizon), int(alg.n_arms)
    extra = alg.extra if isinstance(alg.extra, dict) else {}
    note = extra.get("input_note")
    if is_mechanism(alg):
        unit = _unit(alg)
        if T == 1:
            what = _plural(K, unit)
        elif K == 1:
            what = _plural(T, unit) + " (one a round)"
        else:
            what = f"{_plural(T, 'round')} of {_plural(K, unit)}"
        kind = "a stream mechanism" if unit == "input" else "a mechanism"
        releases = ", releasing a value each round" if unit == "input" and T > 1 else ""
        return (f"{kind} over {what}, each in {_range(alg)}{releases}"
                + (f" ({note})" if note else ""))
    parts = [f"T = {T:,} rounds"]
    full = alg.learner.feedback == "full"
    parts.append(f"points in {K} dimensions" if plays_points(alg)
                 else f"K = {K} experts, full information" if full and not alg.n_experts
                 else f"K = {K} arms")
    if alg.n_experts:
        parts.append(f"N = {alg.n_experts} experts")
    lo, hi = alg.loss_range
    if (lo, hi) != (0.0, 1.0):
        parts.append(f"losses in {_range(alg)}")
    return ", ".join(parts) + (f" ({note})" if note else "")


def relation_text(alg: Algorithm, claim) -> str:
    """The neighbouring relation with its Δ, and what it means here."""
    words = claim.relation_words
    what = _unit(alg) if is_mechanism(alg) else "loss"
    if claim.relation == "bounded-all":
        delta = f" by at most Δ = {claim.max_change:g}" if claim.max_change is not None else ""
        return f"{words} (every {what} may change{delta})"
    delta = f", each by at most Δ = {claim.max_change:g}" if claim.max_change is not None else ""
    if is_mechanism(alg) and what == "input":
        return f"{words} (one round's input changes{delta})"
    if is_mechanism(alg):
        return f"{words} (one round's answers change{delta})"
    return f"{words} (one round's losses change{delta})"


def describe(alg: Algorithm) -> dict:
    """The words the result document carries for the report."""
    d = {"kind": "mechanism" if is_mechanism(alg) else "learner", "setting": setting(alg)}
    if plays_points(alg):
        d["plays"] = "points"
    elif not is_mechanism(alg):
        d["plays"] = ("experts" if alg.learner.feedback == "full" and not alg.n_experts
                      else "arms")
    labels = code_labels(alg)
    if labels is not None:
        d["code_labels"] = labels
        legend = code_legend(alg)
        if legend:
            d["code_legend"] = legend
    return d


# How a replay result whose trace was refused begins its event (the summary
# reads the reason back from it).
NO_TRACE = "no exact trace: "

_CODE_AT = re.compile(r"(I_(?:\d+|t|s|u) (?:=|!=) )(\d+)\b")
_SEQUENCE = re.compile(r"I = \(([\d,]+)\)")


def round_code(label: str):
    """The round of a label ``round t code`` (a learner's arm or a
    mechanism's code that round), else None."""
    parts = label.split()
    if len(parts) == 3 and parts[0] == "round" and parts[2] == "code":
        return parts[1]
    return None


def output_part(label: str, value, codes=None) -> str:
    """One output element as events print it: a round's code as I_t, 1-based
    (as arms are everywhere) or by what it stands for (``code_labels``); a
    number as it is."""
    t = round_code(label)
    if t is not None and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
        return f"I_{t} = {codes[value] if codes and 0 <= value < len(codes) else value + 1}"
    return f"{label} = {value:g}" if isinstance(value, float) else f"{label} = {value}"


def final_output(alg: Algorithm) -> bool:
    """Whether a function's whole output is observed at its last round (the
    rounds before carry no output of their own)."""
    return bool((alg.extra or {}).get("final_output"))


def event_label(event: str, labels: Optional[list[str]], final: bool = False) -> str:
    """An event as shown: its 1-based output codes replaced by what they
    stand for, where the mechanism says (``code_labels``).  With ``final``
    (the whole output observed at the last round), a sequence of codes is
    shown as that output alone: the earlier rounds' codes are padding."""
    if not labels:
        return event

    def one(code: str) -> str:
        c = int(code) - 1
        return labels[c] if 0 <= c < len(labels) else code

    def seq(m) -> str:
        shown = [one(c) for c in m.group(1).split(",") if c]
        if final and shown:
            return "output = " + shown[-1]
        glue = "" if all(len(s) == 1 for s in shown) else ","
        return "I = (" + glue.join(shown) + ")"

    event = _SEQUENCE.sub(seq, event)
    return _CODE_AT.sub(lambda m: m.group(1) + one(m.group(2)), event)
