"""Render an ``audit-result/1`` document as a human report.

``write_report(doc, out_dir)`` writes, into ``out_dir``:

- ``report.html`` — one self-contained file (inline CSS, every figure a
  base64 ``data:`` URI), readable offline and safe to mail or attach to CI;
- ``report.md`` — the same content for code review, figures referenced as the
  PNG files beside it;
- ``result.json`` — the document itself, so the report can be re-rendered
  (``audit report result.json --out DIR``) without re-running anything;
- the PNG figures (``fig-NN-<what>.png``).

Every file is written to a temporary name and renamed into place, so a
failure never leaves a half-written report.

May import: ``audit.report.figures``, ``audit.jsondoc`` (the JSON text of
``result.json``); it reads result documents, never the engine.
"""
from __future__ import annotations

import base64
import html
import os
import re
from typing import Optional

from audit import jsondoc
from audit.report.figures import drawn_from, figure_for, fmt, regret_figure, stamp_of, stamped

REQUIRED = ("algorithm", "claim", "budget", "attacks", "verdict")
SCOPES = {
    "actions": "the released sequence of actions I_1..I_T (or chosen experts / points)",
    "transcript": "the actions plus every noisy value the algorithm releases to its inner "
                  "learner (implies the actions claim by post-processing)",
    "per-round": "each round's mechanism, for every fixed history, is ε_t-DP",
}
_FIG_RE = re.compile(r"^fig-\d\d-[A-Za-z0-9_.-]+\.png$")


# ----------------------------------------------------------------- helpers

def _check(doc) -> None:
    if not isinstance(doc, dict):
        raise ValueError("result document must be a JSON object")
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise ValueError(f"result document lacks {', '.join(missing)} "
                         f"(needs {', '.join(REQUIRED)})")
    if not isinstance(doc["attacks"], list) or not all(isinstance(a, dict) for a in doc["attacks"]):
        raise ValueError("result document: 'attacks' must be a list of objects")
    for key in ("algorithm", "claim", "budget"):
        if not isinstance(doc[key], dict):
            raise ValueError(f"result document: {key!r} must be an object")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-.")[:60] or "x"


def _pct(x) -> str:
    try:
        v = float(x) * 100
    except (TypeError, ValueError):
        return str(x)
    return f"{v:.0f}%" if abs(v - round(v)) < 1e-9 else f"{v:.3g}%"


def _atomic_write(path: str, data, binary: bool = False) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _bounds_cell(a: dict) -> str:
    """The bounds a black-box result used: two Clopper–Pearson bounds, or on
    coupled runs the one test it ran."""
    b, c = a.get("bounds") or {}, a.get("coupled")
    if c and c.get("test") == "coupled bet":
        return (f"coupled runs: one bet λ = {fmt(b.get('bet'), 4)} on {fmt(b.get('blocks'))} "
                f"held-out blocks of {fmt(b.get('block_runs'))} runs a side, denominator counts "
                f"truncated at {fmt(b.get('truncation'))} (α {fmt(b.get('alpha'), 3)}, one bound)")
    if c:
        return (f"coupled runs, tested as independent: p_lo = {fmt(b.get('numerator_lower'))}, "
                f"p′_hi = {fmt(b.get('denominator_upper'))} (α/2 each of α "
                f"{fmt(b.get('alpha'), 3)})")
    return (f"p_lo = {fmt(b.get('numerator_lower'))}, p′_hi = "
            f"{fmt(b.get('denominator_upper'))} (α each {fmt(b.get('alpha_each'), 3)})")


def _is_black(a: dict) -> bool:
    return a.get("mode") == "black-box"


def _label(a: dict) -> str:
    if _is_black(a):
        return str(a.get("scenario") or a.get("name", "?"))
    return f"{a.get('scenario') or a.get('name', '?')}"


_BOUND_LABELS = {
    "dkw_band": "DKW band half-width",
    "alpha": "α",
    "delta_lower_at_claimed_epsilon": "δ lower bound at the claimed ε",
    "delta_point_at_claimed_epsilon": "δ point estimate at the claimed ε",
    "numerator_lower": "p lower bound",
    "denominator_upper": "p′ upper bound",
    "alpha_each": "α each",
}


def _bound_label(key) -> str:
    """A human label for a key of a result's ``bounds`` (or ``counts``)."""
    key = str(key)
    if key in _BOUND_LABELS:
        return _BOUND_LABELS[key]
    words = key.replace("_", " ")
    for raw, sym in (("epsilon", "ε"), ("delta", "δ"), ("alpha", "α")):
        words = re.sub(rf"\b{raw}\b", sym, words)
    return words


def _plays_points(doc: dict) -> bool:
    """Whether the algorithm plays points of a domain (projection-free
    learners) rather than arms: declared by its parameters, or visible in
    the attacks' point events (x_t[i] > c)."""
    params = (doc.get("algorithm") or {}).get("params") or {}
    if isinstance(params, dict) and ("domain" in params or "n" in params):
        return True
    return any(re.search(r"\bx_[^\s\[]*\[", str(a.get("event", ""))) for a in doc["attacks"])


_ROUND_RE = re.compile(r"round\s+(\d+)\s*:\s*(\[[^\]]*\])\s*vs\s*(\[[^\]]*\])", re.S)


def _num(text: str) -> str:
    v = float(text)
    if v == 0:
        v = 0.0                                   # -0. is 0
    return fmt(v, 3).replace("-", "−")


def _pair_cell(a: dict, mechanism: bool, points: bool) -> str:
    """A result's pair as its table shows it: a mechanism's inputs as two
    vectors where they are short, else the pair in words."""
    return ((_inputs_text(a.get("inputs")) if mechanism else None)
            or _pair_text(a.get("pair"), "answer" if mechanism
                          else "coordinate" if points else "arm"))


def _pair_text(pair, unit: str = "arm") -> str:
    """The neighbouring pair as the rounds and coordinates that differ:
    ``round 1, arm 1: 1 vs 0``.  The engine describes a pair as
    ``round t: [ℓ_t] vs [ℓ′_t]; …`` with numpy's array printing; anything that
    does not parse is shown as given, whitespace collapsed."""
    if pair is None:
        return "—"
    raw = " ".join(str(pair).split())
    parts = []
    matches = list(_ROUND_RE.finditer(str(pair)))
    if not matches:
        return raw
    try:
        for m in matches:
            a = [x for x in re.split(r"[,\s]+", m.group(2).strip("[] ")) if x]
            b = [x for x in re.split(r"[,\s]+", m.group(3).strip("[] ")) if x]
            if "..." in a or "..." in b or len(a) != len(b):
                return raw
            diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if float(x) != float(y)]
            if not diff:
                parts.append(f"round {m.group(1)}: {_num_list(a)} vs {_num_list(b)}")
                continue
            shown = [f"{unit} {i + 1}: {_num(x)} vs {_num(y)}" for i, x, y in diff[:4]]
            more = f" (+{len(diff) - 4} more {unit}s)" if len(diff) > 4 else ""
            if len(shown) == 1:
                parts.append(f"round {m.group(1)}, {shown[0]}{more}")
            else:
                parts.append(f"round {m.group(1)}: " + ", ".join(shown) + more)
    except ValueError:
        return raw
    tail = re.search(r"\(\+(\d+) more rounds?\)\s*$", raw)
    out = "; ".join(parts)
    if tail:
        out += f" (+{tail.group(1)} more rounds)"
    return out


def _num_list(xs) -> str:
    return "(" + ", ".join(_num(x) for x in xs) + ")"


def _is_mechanism(doc: dict) -> bool:
    """A mechanism over a stream of answers (the document says so), not a
    learner: no horizon, arms, losses or inner learner in its report."""
    return (doc.get("algorithm") or {}).get("kind") == "mechanism"


def _inputs_text(inputs) -> Optional[str]:
    """Both inputs of a mechanism's pair as vectors: ``ℓ = (1, 1, 1) vs ℓ′ = (2, 0, 0)``."""
    if not isinstance(inputs, dict):
        return None
    try:
        sides = []
        for key in ("l", "l_prime"):
            rows = inputs[key]
            flat = [r[0] if isinstance(r, list) and len(r) == 1 else r for r in rows]
            if len(flat) == 1 and isinstance(flat[0], list):
                flat = flat[0]                           # one round of several answers
            sides.append("(" + ", ".join(_num_list(v) if isinstance(v, list) else _num(v)
                                         for v in flat) + ")")
    except (KeyError, TypeError, ValueError):
        return None
    return f"ℓ = {sides[0]} vs ℓ′ = {sides[1]}"


def _attack_verdict(doc: dict, a: dict) -> str:
    """The verdict cell of one attack.  Inside a violation report an attack
    that did not exceed the claim is "no evidence" (calling it consistent next
    to the violation banner reads as a contradiction)."""
    v = str(a.get("verdict", "?"))
    if v == "information":
        return "INFORMATION ONLY"
    if v == "intermediate":
        return "INTERMEDIATE OBJECT (not a verdict)"
    if v == "consistent" and doc.get("verdict") == "violation":
        return "NO EVIDENCE (this attack)"
    return v.upper()


def _resume_text(doc: dict) -> str:
    """How much of the run was resumed from the store, if the document says."""
    info = doc.get("resume") if isinstance(doc.get("resume"), dict) else doc
    reused = info.get("chunks_reused")
    computed = info.get("chunks_computed")
    try:
        reused = int(reused or 0)
    except (TypeError, ValueError):
        return ""
    if reused <= 0:
        return ""
    try:
        total = reused + int(computed or 0)
        of = f"{reused} of {total} chunks"
    except (TypeError, ValueError):
        of = f"{reused} chunks"
    return (f" — resumed: {of} came from the store of an earlier run, so this is the time of "
            f"the resumed part only, not of the whole audit")


# ----------------------------------------------------------------- content model
#
# The report is built once as a list of blocks, then rendered to HTML and to
# Markdown, so the two never disagree.  Blocks: ("h", level, text),
# ("p", text, css_class), ("kv", [(key, value)]), ("table", header, rows),
# ("list", [text]), ("code", text), ("fig", path, caption), ("banner", ...).

def _relation_text(claim: dict) -> str:
    """The relation with its Δ, in words (the document's ``neighbours``, or
    built from ``relation`` and ``max_change`` for older documents)."""
    if claim.get("neighbours"):
        return str(claim["neighbours"])
    rel = str(claim.get("relation") or "one-round")
    delta = claim.get("max_change")
    words = rel + (f", Δ = {fmt(delta)}" if delta is not None else "")
    if rel == "one-round":
        return f"{words} — the two inputs differ in one round's row"
    if rel == "bounded-all":
        return f"{words} — every value may change" + (f" by at most {fmt(delta)}"
                                                      if delta is not None else "")
    return words


def _claim_text(claim: dict) -> str:
    eps = f"ε = {fmt(claim.get('epsilon'))}"
    if claim.get("delta"):
        eps += f", δ = {fmt(claim.get('delta'))}"
    if claim.get("curve"):
        eps += f" (the point of the {claim['curve']['claim']} curve its tests aim at)"
    return eps


def _as_float(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def _violations(doc: dict) -> list[dict]:
    return [a for a in doc["attacks"] if a.get("verdict") == "violation"]


def _bound_origin(doc: dict) -> list[str]:
    """Which result gives the overall ε lower bound, and whether it merely
    attains the claim (a tight claim) rather than exceeding it."""
    best = doc.get("epsilon_lower_bound")
    try:
        best = float(best)
    except (TypeError, ValueError):
        return []
    if not best > 0:
        return []
    for a in doc["attacks"]:
        if a.get("kind") == "per-round":
            continue            # ε_t is a per-round quantity, never a bound on the total ε
        value = a.get("per_record_epsilon_lower_bound", a.get("epsilon_lower_bound"))
        try:
            if float(value) != best:
                continue
        except (TypeError, ValueError):
            continue
        mode = "black-box" if _is_black(a) else f"white-box {a.get('kind', '')}"
        out = [f"The largest lower bound comes from {_label(a)} [{mode}]."]
        eps = doc["claim"].get("epsilon")
        if doc["verdict"] != "violation" and eps and abs(best - float(eps)) <= 1e-6 * float(eps):
            out.append("It equals the claimed ε up to floating-point rounding: the claim is "
                       "attained (tight at this attack), not exceeded.")
        return out
    return []


def _decided_line(a: dict) -> str:
    """One line naming a violating result and the claim it exceeded."""
    cmp = a.get("claim_compared") or {}
    what = (f"{cmp.get('what', 'claim')} = {fmt(cmp.get('value'))}" if cmp
            else f"claimed ε = {fmt((a.get('claim') or {}).get('epsilon'))}")
    mode = "black-box" if _is_black(a) else f"white-box {a.get('kind', '')}"
    how = ("exact" if not _is_black(a) and a.get("exact") else "statistical")
    value = fmt(a.get("epsilon_lower_bound"))
    if a.get("kind") == "per-round":
        return f"{_label(a)} [{mode}]: per-round loss ε_t = {value} > {what} ({how})"
    return f"{_label(a)} [{mode}]: ε_lb = {value} > {what} ({how})"


def _banner(doc: dict) -> dict:
    budget, claim = doc["budget"], doc["claim"]
    conf = budget.get("confidence", 0.95)
    violation = doc["verdict"] == "violation"
    viol = sorted(_violations(doc), key=lambda a: -_as_float(a.get("epsilon_lower_bound")))
    exact = [a for a in viol if not _is_black(a) and a.get("exact")]
    about = (f"about {claim['output']}" if _is_mechanism(doc) and claim.get("output")
             else f"scope {claim.get('scope', '?')}")
    overall = (f"ε lower bound {fmt(doc.get('epsilon_lower_bound'))} vs claimed "
               f"{_claim_text(claim)} ({about})")
    lines = []
    if violation and viol:
        # Name the evidence that decided first: a per-round-only violation must
        # not read as "ε lower bound 0" under a VIOLATION banner.
        if len(viol) == 1:
            lines.append(f"Decided by {_decided_line(viol[0])}.")
        else:
            lines.append(f"Decided by {len(viol)} results that exceed the claim:")
            lines += [f"• {_decided_line(a)}" for a in viol[:6]]
            if len(viol) > 6:
                lines.append(f"• … and {len(viol) - 6} more (see the tables below)")
        try:
            best = float(doc.get("epsilon_lower_bound"))
        except (TypeError, ValueError):
            best = None
        if all(a.get("kind") == "per-round" for a in viol) and not (best and best > 0):
            lines.append(f"The claimed total is {_claim_text(claim)} (scope "
                         f"{claim.get('scope', '?')}); per-round losses are not bounds on the "
                         f"total ε, and no other result in this run gave one.")
        else:
            lines.append("Overall " + overall)
    else:
        lines.append(overall)
    lines += _bound_origin(doc)
    if not doc.get("reproducible", True):
        lines.append("Not reproducible: this code draws randomness the audit cannot seed; its "
                     "runs are independent, so the bounds hold, but a rerun gives other counts "
                     "(see Reproduce).")
    for reason in doc.get("white_box_refused") or []:
        lines.append(f"White-box modes were not used ({reason}); the verdict rests on the "
                     f"black-box audit.")
    if violation:
        if exact:
            bases = sorted({r.get("meaning", r.get("basis", "")) for a in exact
                            for r in a.get("rests_on") or []})
            lines.append("At least one violation is exact, for the draws the code was observed "
                         "to make: the output it names is a certificate with no statistical "
                         "error (the exact privacy loss of that output exceeds the claim)"
                         + (f"; it rests on {' and '.join(bases)}." if bases else "."))
        statistical = [a for a in viol if a not in exact]
        if statistical:
            lines.append(f"Statistical results hold with {_pct(conf)} confidence overall "
                         f"(Bonferroni-corrected over every bound computed).")
    else:
        lines.append(f"Confidence {_pct(conf)} (Bonferroni-corrected over every bound computed): "
                     f"no attack's lower bound exceeded the claim.")
    return {"violation": violation,
            "title": "VIOLATION — the claim is false for this implementation" if violation
            else "CONSISTENT — no evidence against the claim at this budget",
            "lines": lines}


def _blocks(doc: dict, figures: dict, regret_fig: Optional[str]) -> list:
    alg, claim, budget = doc["algorithm"], doc["claim"], doc["budget"]
    attacks = doc["attacks"]
    conf = budget.get("confidence", 0.95)
    B = []
    B.append(("h", 1, f"Privacy audit: {alg.get('name', '?')}"))
    B.append(("banner", _banner(doc)))

    # -- claim
    B.append(("h", 2, "Claim audited"))
    kv = [("ε", fmt(claim.get("epsilon"))), ("δ", fmt(claim.get("delta", 0.0)))]
    curve = claim.get("curve")
    if curve:
        kv = [("claim", f"{curve.get('claim')}: its whole δ(ε) curve; a certified δ(ε) above "
                        f"it anywhere refutes it"),
              ("event tests aimed at", f"ε = {fmt(claim.get('epsilon'))}, δ = "
                                       f"{fmt(claim.get('delta', 0.0))} (a point of the curve)")]
    if claim.get("per_round_epsilon") is not None:
        kv.append(("per-round ε_t", f"{fmt(claim['per_round_epsilon'])} (the claim is their "
                                     f"composition over the horizon)"))
    scope = claim.get("scope", "?")
    mechanism = _is_mechanism(doc)
    if not mechanism or not claim.get("output"):
        kv.append(("scope", f"{scope} — {SCOPES.get(scope, 'as declared by the algorithm')}"))
    if claim.get("output"):
        kv.append(("output", str(claim["output"])))
    legend = alg.get("code_legend")
    if legend:
        kv.append(("output codes", legend))
    kv.append(("neighbouring relation", _relation_text(claim)))
    kv.append(("source", str(claim.get("source", "—"))))
    kv.append(("overridden", "yes — audited against a user-supplied claim, not the algorithm's own"
               if claim.get("overridden") else "no — the algorithm's own claim at these parameters"))
    B.append(("kv", kv))

    # -- algorithm
    points = _plays_points(doc)
    if mechanism:
        B.append(("h", 2, "Mechanism"))
        kv = [("name", str(alg.get("name", "?"))),
              ("what it reads", re.sub(r"^a mechanism over ", "", str(
                  alg.get("setting") or f"{fmt(alg.get('horizon'))} rounds of "
                                        f"{fmt(alg.get('arms'))} answers")))]
        labels = alg.get("code_labels")
        if labels:
            kv.append(("output codes", ", ".join(f"{i + 1} = {v}" for i, v in enumerate(labels))
                       if len(labels) <= 12 else f"{len(labels)} codes"))
    else:
        B.append(("h", 2, "Algorithm"))
        kv = [("name", str(alg.get("name", "?"))), ("horizon T", fmt(alg.get("horizon"))),
              ("dimension n (the learner plays points)" if points
               else "experts K (full information)" if alg.get("plays") == "experts"
               else "arms K", fmt(alg.get("arms")))]
        if alg.get("experts") is not None:
            kv.append(("experts N", fmt(alg.get("experts"))))
        lr = alg.get("loss_range")
        if isinstance(lr, list) and len(lr) == 2 and [float(v) for v in lr] != [0.0, 1.0]:
            kv.append(("losses in", f"[{fmt(lr[0])}, {fmt(lr[1])}]"))
    params = alg.get("params") or {}
    kv += [(f"param {k}", fmt(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
            else str(v)) for k, v in params.items()]
    B.append(("kv", kv))

    # -- declaration checks (white-box evidence is used only when they pass)
    checks = doc.get("declaration_checks") or []
    if checks:
        B.append(("h", 2, "Declaration checks"))
        B.append(("p", "White-box evidence rests on what the "
                       + ("mechanism declares about itself (the law of the noise it adds, e.g. "
                          "a declared sparse vector or report-noisy-max). " if mechanism else
                          "algorithm declares about itself (its action probabilities, or the "
                          "law of the noise on what it releases). ") +
                       "Before any white-box mode is used, pilots on their own random streams "
                       "check the declarations against what the code does; each check refuses a "
                       "correct declaration with probability at most its stated false-refusal "
                       "probability.", ""))
        rows = []
        for c in checks:
            if not isinstance(c, dict):
                continue
            op = ">" if c.get("fails_when") == "above" else "<"
            rows.append([str(c.get("check", "?")), str(c.get("scenario", "—")),
                         fmt(c.get("statistic"), 3), f"fails when {op} {fmt(c.get('threshold'), 3)}",
                         fmt(c.get("false_refusal_probability"), 3),
                         str(c.get("outcome", "?")).upper()])
        B.append(("table", ["check", "scenario", "statistic", "threshold",
                            "false-refusal probability", "outcome"], rows))
        bad = [c for c in checks if isinstance(c, dict) and c.get("outcome") == "fail"]
        if bad:
            B.append(("list", [f"{c.get('check')} on {c.get('scenario')}: {c.get('what')}. "
                               f"What to change: {c.get('advice')}" for c in bad]))
        for reason in doc.get("white_box_refused") or []:
            B.append(("p", f"White-box modes were not used: {reason}. The black-box audit, "
                           f"which needs no declaration, decides the verdict.", ""))

    # -- attack tables
    B.append(("h", 2, "Attacks"))
    black = [a for a in attacks if _is_black(a)]
    white = [a for a in attacks if not _is_black(a)]
    if not attacks:
        B.append(("p", "No attack results in this document.", ""))
    if black:
        coupled = any(a.get("coupled") for a in black)
        independent = not all(a.get("coupled") for a in black)
        B.append(("h", 3, "Black-box (outputs only; some pairs on coupled runs, both sides of a "
                          "block from one seed, the others on independent runs with "
                          "Clopper–Pearson bounds)" if coupled and independent else
                          "Black-box (outputs only, on coupled runs: both sides of a block from "
                          "one seed)" if coupled else
                          "Black-box (outputs only, Clopper–Pearson bounds on held-out runs)"))
        rows = []
        for a in black:
            c, b = a.get("counts") or {}, a.get("bounds") or {}
            num_side, den_side = ("ℓ", "ℓ′") if a.get("direction", "l>l'") != "l'>l" else ("ℓ′", "ℓ")
            cl = a.get("claim") or claim
            group = a.get("group_size", 1) or 1
            claim_cell = f"ε = {fmt(cl.get('epsilon'))}" + (
                f", δ = {fmt(cl.get('delta'))}" if cl.get("delta") else "")
            if group > 1:
                claim_cell += f" (group of {group}; per record ε_lb = " \
                              f"{fmt(a.get('per_record_epsilon_lower_bound'))})"
            pair = _pair_cell(a, mechanism, points)
            rows.append([
                _label(a), "black-box", pair,
                f"{a.get('event', '?')} (P on {num_side} over P on {den_side})",
                f"{fmt(c.get('numerator'))}/{fmt(c.get('trials_per_side'))} vs "
                f"{fmt(c.get('denominator'))}/{fmt(c.get('trials_per_side'))} held-out "
                f"(+{fmt(c.get('selection_runs_per_side'))} "
                f"{'pilot' if a.get('coupled') else 'selection'} runs per side)",
                _bounds_cell(a),
                fmt(a.get("epsilon_lower_bound")), claim_cell, _attack_verdict(doc, a)])
        B.append(("table", ["attack / scenario", "mode",
                            "pair (ℓ vs ℓ′, the answers)" if mechanism else "pair (ℓ vs ℓ′)",
                            "event",
                            "counts (numerator vs denominator)",
                            "bounds" if coupled else "Clopper–Pearson bounds", "ε_lb",
                            "claim compared", "verdict"], rows))
    if white:
        B.append(("h", 3, "White-box (exact privacy loss, replaying both runs)"))
        rows = []
        for a in white:
            cmp = a.get("claim_compared") or {}
            c, b = a.get("counts") or {}, a.get("bounds") or {}
            cnt = ", ".join(f"{_bound_label(k)} {fmt(v)}" for k, v in c.items()) if c else "—"
            bnd = "; ".join(f"{_bound_label(k)} = {fmt(v, 3)}" for k, v in b.items()) if b else "—"
            scope_cell = str(a.get("scope", "—"))
            if mechanism and scope_cell == "actions":
                scope_cell = "output"
            pair = _pair_cell(a, mechanism, points)
            rows.append([
                _label(a), f"white-box ({a.get('kind', '?')})", scope_cell, pair,
                str(a.get("event", "?")), cnt, bnd,
                ("exact for the draws the code was observed to make (rests on "
                 + ", ".join(r.get("short") or r.get("basis", "?")
                             for r in a.get("rests_on") or []) + ")"
                 if a.get("rests_on") else "exact — no statistical error") if a.get("exact")
                else f"statistical ({_pct(conf)} overall)",
                fmt(a.get("epsilon_lower_bound")),
                f"{cmp.get('what', 'claim')} = {fmt(cmp.get('value'))}",
                _attack_verdict(doc, a)])
        B.append(("table", ["attack / scenario", "mode (kind)", "scope", "pair", "event",
                            "counts", "bounds", "exact?", "ε_lb", "claim compared", "verdict"],
                  rows))

    # -- details per attack: notes and figures
    if attacks:
        B.append(("h", 2, "Details and notes"))
    for i, a in enumerate(attacks):
        mode = "black-box" if _is_black(a) else f"white-box, {a.get('kind', '?')}"
        B.append(("h", 3, f"{_label(a)} ({mode})"))
        if not _is_black(a) and a.get("kind") == "search":
            d = a.get("details") or {}
            if d.get("certificate"):
                B.append(("p", f"Certificate: the single output x = {d['certificate']}; "
                               f"exact loss L(x) = {fmt(d.get('loss'))}.", ""))
        if not _is_black(a) and a.get("kind") == "per-round":
            d = a.get("details") or {}
            first = d.get("first_round_exceeding_claim")
            B.append(("p", f"History: {d.get('history', '?')}; T = {fmt(d.get('horizon'))}; "
                           + ("Information only: the claim has no per-round part to compare "
                              "ε_t with." if a.get("verdict") == "information" else
                              f"ε_t first exceeds the per-round claim at round {fmt(first)}."
                              if first else "ε_t never exceeds the per-round claim."), ""))
        if not _is_black(a) and a.get("kind") == "pld":
            w = a.get("pair_worst_case")
            if w:
                eps_w = "∞ (unbounded)" if w.get("unbounded") else fmt(w.get("epsilon"))
                at_most = "at most " if w.get("upper_bound") else ""
                B.append(("p", f"Worst case for this pair, over all its outputs: {at_most}ε = "
                               f"{eps_w} at "
                               f"δ = {fmt(w.get('delta'))} ({w.get('how', '')}); this audit's "
                               f"ε_lb = {fmt(a.get('epsilon_lower_bound'))}.", ""))
            cp = (a.get("details") or {}).get("claimed_profile")
            if cp:
                B.append(("p", f"Claimed δ(ε) curve: {cp.get('description', '?')} "
                               f"(dp_accounting); δ(ε = {fmt(claim.get('epsilon'))}) = "
                               f"{fmt(cp.get('delta_at_claimed_epsilon'), 3)}. The empirical "
                               f"lower band δ_lb(ε) is "
                               + ("below it at every ε of the grid." if cp.get("below_everywhere")
                                  else "above it somewhere: the mechanism's profile is "
                                       "contradicted."), ""))
        notes = [str(n) for n in (a.get("notes") or [])]
        if notes:
            B.append(("list", notes))
        fig = figures.get(i)
        if fig and fig[0]:
            B.append(("fig", fig[0], fig[1]))
        elif fig and fig[1]:
            B.append(("p", fig[1], "muted"))

    # -- regret
    r = doc.get("regret")
    if r:
        B.append(("h", 2, "Regret (utility)"))
        txt = (f"Mean regret against the best fixed arm (expert) of each prefix on instance "
               f"'{r.get('instance', '?')}', {fmt(r.get('runs'))} runs, "
               f"{_pct(r.get('confidence', 0.95))} Student-t band.")
        if r.get("mean"):
            txt += f" At t = {fmt(r['t'][-1])}: {fmt(r['mean'][-1])} " \
                   f"({fmt(r['lower'][-1])} … {fmt(r['upper'][-1])})."
        bound = r.get("bound")
        if bound:
            txt += f" Paper's bound: {bound.get('formula', '?')} ({bound.get('source', '?')})."
        B.append(("p", txt, ""))
        if regret_fig:
            B.append(("fig", regret_fig, "Regret with confidence band"
                      + (" and the paper's bound (dashed)" if bound else "")))

    # -- reproduce
    B.append(("h", 2, "Reproduce"))
    B.append(("code", str(doc.get("reproduce") or "(no command recorded)")))
    if doc.get("reproducible", True):
        B.append(("p", f"Seed {budget.get('seed', '?')}: every run's random stream is derived "
                       f"from it, so the same command gives the same counts on any number of "
                       f"workers. Re-render this report without re-running: audit report "
                       f"result.json --out DIR", ""))
    else:
        B.append(("p", f"Not reproducible: {doc.get('not_reproducible', '')}. Its runs were "
                       f"made one after another in one process, so they are independent and "
                       f"the bounds hold, but the same command gives other counts each time. "
                       f"Re-render this report without re-running: audit report result.json "
                       f"--out DIR", ""))

    # -- budget
    B.append(("h", 2, "Budget and what the verdict means"))
    maxdet = doc.get("max_detectable_epsilon")
    kv = [("trials per side", fmt(budget.get("trials"))),
          ("confidence", _pct(conf) + " overall (Bonferroni over all bounds)"),
          ("seed", str(budget.get("seed", "?"))),
          ("max detectable ε", f"{fmt(maxdet)} (the largest ε_lb this black-box budget could "
                               f"ever show)" if black else "— (no black-box attack ran)"),
          ("runtime", f"{fmt(doc.get('runtime_seconds'), 3)} s{_resume_text(doc)}"),
          ("tool version", str(doc.get("tool_version", "?")))]
    B.append(("kv", kv))
    B.append(("p", _meaning(doc, bool(black)), ""))
    return B


def _meaning(doc: dict, has_black: bool) -> str:
    budget, claim = doc["budget"], doc["claim"]
    conf = _pct(budget.get("confidence", 0.95))
    eps = claim.get("epsilon")
    maxdet = doc.get("max_detectable_epsilon")
    if doc["verdict"] == "violation":
        s = (f"“Violation” means a lower bound on the privacy loss exceeds the claim — with at least "
             f"{conf} confidence for statistical results, and with certainty for exact white-box "
             f"results — so the claim does not hold for this implementation at these parameters.")
    else:
        s = (f"“Consistent” means no evidence against the claim at this budget: with "
             f"{fmt(budget.get('trials'))} runs per side and {conf} confidence, no attack's lower "
             f"bound exceeded the claimed ε = {fmt(eps)}. It is not a proof of privacy: other "
             f"attacks, other events or a larger budget might still find a violation.")
    try:
        limited = has_black and maxdet is not None and eps is not None and float(maxdet) < float(eps)
    except (TypeError, ValueError):
        limited = False
    if limited:
        s += (f" The largest ε_lb this black-box budget could ever show is {fmt(maxdet)}, below the "
              f"claimed ε = {fmt(eps)}: for the black-box attacks the budget, not the algorithm, "
              f"limits what could be shown" +
              (" (white-box results are exact or sample-based and are not limited by it)."
               if any(not _is_black(a) for a in doc["attacks"]) else "."))
    return s


# ----------------------------------------------------------------- HTML

CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1100px;margin:1.5em auto;
padding:0 1em;color:#1a1a1a;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.3em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{margin-top:1.3em}
.banner{padding:.9em 1.2em;border-radius:6px;margin:1em 0;color:#fff}
.banner.violation{background:#b8420f;border-left:10px solid #7a2400}
.banner.consistent{background:#00795a;border-left:10px solid #004d39}
.banner .title{font-size:1.35em;font-weight:700;letter-spacing:.02em}
.banner p{margin:.35em 0}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em;width:100%}
th,td{border:1px solid #ccc;padding:.35em .55em;vertical-align:top;text-align:left}
th{background:#f2f2f2}
table.kv{width:auto}table.kv th{width:13em}
td.violation{color:#b8420f;font-weight:700}td.consistent{color:#00795a;font-weight:700}
td.no,td.information{color:#555;font-weight:600}
pre{background:#f6f6f6;border:1px solid #ddd;padding:.7em;overflow-x:auto;white-space:pre-wrap;
word-break:normal;overflow-wrap:normal}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}
.muted{color:#777;font-style:italic}
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _html(blocks: list, title: str) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"]
    for blk in blocks:
        kind = blk[0]
        if kind == "h":
            out.append(f"<h{blk[1]}>{_e(blk[2])}</h{blk[1]}>")
        elif kind == "banner":
            b = blk[1]
            cls = "violation" if b["violation"] else "consistent"
            out.append(f'<div class="banner {cls}" role="status"><div class="title">{_e(b["title"])}'
                       "</div>" + "".join(f"<p>{_e(x)}</p>" for x in b["lines"]) + "</div>")
        elif kind == "p":
            cls = f' class="{blk[2]}"' if blk[2] else ""
            out.append(f"<p{cls}>{_e(blk[1])}</p>")
        elif kind == "kv":
            out.append('<table class="kv">' + "".join(
                f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in blk[1]) + "</table>")
        elif kind == "table":
            head = "".join(f"<th>{_e(h)}</th>" for h in blk[1])
            body = []
            for row in blk[2]:
                cells = []
                for h, v in zip(blk[1], row):
                    cls = (f' class="{v.split()[0].lower()}"' if h == "verdict" and v
                           and v.split()[0].lower() in ("violation", "consistent", "no",
                                                         "information", "intermediate")
                           else "")
                    cells.append(f"<td{cls}>{_e(v)}</td>")
                body.append("<tr>" + "".join(cells) + "</tr>")
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in blk[1]) + "</ul>")
        elif kind == "code":
            out.append(f"<pre><code>{_e(blk[1])}</code></pre>")
        elif kind == "fig":
            with open(blk[1], "rb") as fh:
                data = base64.b64encode(fh.read()).decode("ascii")
            out.append(f'<figure><img src="data:image/png;base64,{data}" alt="{_e(blk[2])}">'
                       f"<figcaption>{_e(blk[2])}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*])|<(?=[A-Za-z/!?])|\](?=[(\[])")


def _md_text(text) -> str:
    """Escape what Markdown would otherwise interpret (emphasis, links, code,
    inline HTML); underscores inside words are left alone (GFM ignores them)."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), str(text))


def _md_cell(text) -> str:
    return _md_text(text).replace("|", "\\|").replace("\n", " ")


def _md(blocks: list, out_dir: str) -> str:
    out = []
    for blk in blocks:
        kind = blk[0]
        if kind == "h":
            out.append("#" * blk[1] + " " + _md_text(blk[2]))
        elif kind == "banner":
            b = blk[1]
            out.append("\n>\n".join([f"> **{_md_text(b['title'])}**"]
                                      + [f"> {_md_text(x)}" for x in b["lines"]]))
        elif kind == "p":
            out.append(f"*{_md_text(blk[1])}*" if blk[2] == "muted" else _md_text(blk[1]))
        elif kind == "kv":
            out.append("| | |\n|---|---|\n" + "\n".join(
                f"| **{_md_cell(k)}** | {_md_cell(v)} |" for k, v in blk[1]))
        elif kind == "table":
            out.append("| " + " | ".join(_md_cell(h) for h in blk[1]) + " |\n"
                       + "|" + "---|" * len(blk[1]) + "\n"
                       + "\n".join("| " + " | ".join(
                           (f"**{_md_cell(v)}**" if h == "verdict" else _md_cell(v))
                           for h, v in zip(blk[1], row)) + " |" for row in blk[2]))
        elif kind == "list":
            out.append("\n".join(f"- {_md_text(x)}" for x in blk[1]))
        elif kind == "code":
            out.append(f"```sh\n{blk[1]}\n```")
        elif kind == "fig":
            rel = os.path.relpath(blk[1], out_dir).replace(os.sep, "/")
            alt = blk[2].replace("[", "(").replace("]", ")")
            out.append(f"![{alt}]({rel})")
    return "\n\n".join(out) + "\n"


# ----------------------------------------------------------------- entry point

def _FIGURE_CONTEXT(doc: dict) -> dict:
    """What of the document, besides its attack entry, a figure reads."""
    return {"claim": doc.get("claim"), "algorithm": doc.get("algorithm"),
            "max_detectable_epsilon": doc.get("max_detectable_epsilon")}


def figure_count(doc: dict) -> int:
    """How many figures ``write_report`` may draw (for a progress bar)."""
    attacks = doc.get("attacks") if isinstance(doc, dict) else None
    return (len(attacks) if isinstance(attacks, list) else 0) + 1


def _draw_figures(doc: dict, out_dir: str, progress=None) -> tuple[dict, Optional[str], list]:
    figures, written = {}, []
    tick = progress or (lambda: None)
    for i, a in enumerate(doc["attacks"]):
        if i:
            tick()                             # the previous attack's figure is done
        what = str(a.get("scenario") or a.get("name") or "attack") + ("-bb" if _is_black(a) else "")
        path = os.path.join(out_dir, f"fig-{i + 1:02d}-{_slug(what)}.png")
        bet = (a.get("coupled") or {}).get("test") == "coupled bet"
        caption = (f"{_label(a)}: chosen event's probability on both sides (Clopper–Pearson "
                   + ("intervals, for reading: the bound is the coupled test's, on the "
                      "difference of the two sides' block counts)" if bet else
                      "intervals; thick ticks mark the bounds used)")
                   + " and ε_lb against the budget"
                   + ("; right: the event's certified privacy profile δ_lb(ε) (from the same "
                      "two bounds, every ε at once) against the claim's δ(ε)"
                      if a.get("privacy_profile") else
                      "; right: the claim's δ(ε) with the one point the coupled bet certifies"
                      if a.get("claim_curve") else "")
                   if _is_black(a) else {
                       "per-round": f"{_label(a)}: P_t(2) and P′_t(2) along the history (top) and the "
                                    f"per-round loss ε_t with the per-round claim (bottom)",
                       "search": f"{_label(a)}: exact cumulative loss along the certificate output, "
                                 f"with the claim it is compared with",
                       "pld": f"{_label(a)}: distribution of the exact privacy loss L and δ(ε) with "
                              f"the claimed (ε, δ)",
                       "integral": f"{_label(a)}: the outputs that certify the most — each one's "
                                   f"probability (density) on both sides with its certified "
                                   f"bracket (left), and its certified privacy loss against the "
                                   f"claim (right); the top row decides",
                       "recursion": f"{_label(a)}: the run event's probability on both sides "
                                    f"with its certified bracket (left) and the exact log-ratio's "
                                    f"bracket against the claim (right)"}.get(a.get("kind"),
                                                                              _label(a)))
        stamp = drawn_from(a, _FIGURE_CONTEXT(doc))
        try:
            if stamp_of(path) == stamp:        # the same figure is already there
                got = path
            else:
                with stamped(stamp):
                    got = figure_for(doc, a, path)
        except Exception as exc:  # noqa: BLE001 - a malformed entry must not stop the report
            figures[i] = (None, f"(figure could not be drawn: {type(exc).__name__}: {exc})")
            continue
        if got:
            figures[i] = (got, caption)
            written.append(got)
    regret_path = os.path.join(out_dir, "fig-00-regret.png")
    stamp = drawn_from(doc.get("regret"), (doc.get("algorithm") or {}).get("name"),
                       (doc.get("algorithm") or {}).get("experts"))
    try:
        if doc.get("regret") and stamp_of(regret_path) == stamp:
            regret = regret_path
        else:
            with stamped(stamp):
                regret = regret_figure(doc, regret_path)
    except Exception:  # noqa: BLE001
        regret = None
    if regret:
        written.append(regret)
    if doc["attacks"]:
        tick()                                 # the last attack's figure
    tick()                                     # the regret figure
    return figures, regret, written


def write_report(doc: dict, out_dir: str, progress=None) -> dict:
    """Write report.html, report.md, result.json and the figures into
    ``out_dir`` (created if missing).  Returns the paths written.
    ``progress()`` is called as figures are drawn (``figure_count(doc)``
    calls at most)."""
    _check(doc)
    os.makedirs(out_dir, exist_ok=True)
    figures, regret, written = _draw_figures(doc, out_dir, progress)
    blocks = _blocks(doc, figures, regret)
    title = f"Privacy audit: {doc['algorithm'].get('name', '?')} — {str(doc['verdict']).upper()}"
    page = _html(blocks, title)
    md = _md(blocks, out_dir)
    paths = {"html": os.path.join(out_dir, "report.html"), "md": os.path.join(out_dir, "report.md"),
             "json": os.path.join(out_dir, "result.json"), "figures": written}
    _atomic_write(paths["json"], jsondoc.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    _atomic_write(paths["md"], md)
    _atomic_write(paths["html"], page)
    # figures of an earlier rendering into the same folder that this one did not draw
    keep = {os.path.basename(p) for p in written}
    for name in os.listdir(out_dir):
        if _FIG_RE.match(name) and name not in keep:
            os.remove(os.path.join(out_dir, name))
    return paths
