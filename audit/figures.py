"""Figures for audit reports (PNG, matplotlib's Agg backend, no display needed).

Every function takes the ``audit-result/1`` document (and, for per-attack
figures, one entry of ``doc["attacks"]``), writes one PNG and returns its
path.  Colours are the Okabe–Ito palette, which stays distinguishable for the
common forms of colour blindness; line styles differ as well so the figures
also read in grey scale.  Every series is thinned to at most ``MAX_POINTS``
points before plotting, so even a document carrying full-length curves gives
small files.
"""
from __future__ import annotations

import math
import os
from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

# Okabe & Ito (2008), "Color universal design".
BLACK = "#000000"
ORANGE = "#E69F00"
SKY = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
GREY = "#777777"

DPI = 110
MAX_POINTS = 4000

_STYLE = {
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.labelsize": 9.5,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


# ----------------------------------------------------------------- helpers

def fmt(x, digits: int = 4) -> str:
    """A number for a label: no exponent for ordinary magnitudes."""
    if x is None:
        return "—"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if 1e4 <= abs(x) < 1e12:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _finite(values) -> np.ndarray:
    a = np.asarray([v if v is not None else np.nan for v in values], dtype=float)
    return a


def thin(y, n: int = MAX_POINTS, keep: str = "max") -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of a series reduced to at most ``n`` points.  With
    ``keep="max"`` each block keeps its maximum (peaks survive), with
    ``"stride"`` every k-th point is kept."""
    y = _finite(y)
    if y.size <= n:
        return np.arange(y.size), y
    edges = np.linspace(0, y.size, n + 1).astype(int)
    if keep == "max":
        vals = np.fmax.reduceat(y, edges[:-1])
        return edges[:-1], vals
    return edges[:-1], y[edges[:-1]]


def _spread(n: int, horizon: Optional[int]) -> np.ndarray:
    """Round numbers (1-based) for ``n`` points downsampled from ``horizon``
    rounds by equal blocks: the first round of each block."""
    if not horizon or horizon <= n:
        return np.arange(1, n + 1, dtype=float)
    return np.linspace(0, horizon, n + 1).astype(int)[:-1].astype(float) + 1


def _save(fig, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}.png"
    try:
        fig.savefig(tmp, dpi=DPI, format="png", bbox_inches="tight",
                    metadata={"Software": None})
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _short(text: str, n: int = 70) -> str:
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def _hline(ax, value, label, colour, style, scale_top=None):
    """A horizontal reference line, or a note in the corner when it lies far
    off the plotted range (e.g. a composed claim of 400,000 next to ε_lb ≈ 1)."""
    if value is None or not math.isfinite(float(value)):
        return False
    if scale_top is not None and value > 20 * max(scale_top, 1e-12):
        ax.text(0.99, 0.97, f"{label} = {fmt(value)} (off scale, above)", transform=ax.transAxes,
                ha="right", va="top", fontsize=8, color=colour)
        return False
    ax.axhline(value, color=colour, linestyle=style, linewidth=1.3, label=f"{label} = {fmt(value)}")
    return True


# ----------------------------------------------------------------- black-box

def blackbox_figure(doc: dict, attack: dict, path: str) -> str:
    """Left: the chosen event's probability on both sides with its interval.
    Right: ε_lb as the number of runs per side grows, against the claim and
    the largest ε_lb this budget could show."""
    est = attack.get("estimates") or {}
    curve = attack.get("epsilon_vs_runs") or {}
    claim_eps = (attack.get("claim") or doc.get("claim") or {}).get("epsilon")
    maxdet = attack.get("max_detectable_epsilon", doc.get("max_detectable_epsilon"))
    has_curve = bool(curve.get("runs_per_side"))
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 2 if has_curve else 1, figsize=(9.2 if has_curve else 4.8, 3.6),
                                 squeeze=False)
        ax = axes[0, 0]
        direction = attack.get("direction", "l>l'")
        num_side, den_side = ("ℓ", "ℓ′") if direction != "l'>l" else ("ℓ′", "ℓ")
        tops, notes = [], []
        for i, (key, side, colour, marker) in enumerate(
                (("numerator", num_side, BLUE, "o"), ("denominator", den_side, ORANGE, "s"))):
            e = est.get(key)
            if not e:
                continue
            p, lo, hi = float(e["p_hat"]), float(e["lower"]), float(e["upper"])
            tops.append(hi)
            ax.errorbar([i], [p], yerr=[[max(p - lo, 0)], [max(hi - p, 0)]], fmt=marker,
                        color=colour, capsize=6, markersize=7, elinewidth=1.6)
            used = lo if key == "numerator" else hi
            ax.plot([i - 0.18, i + 0.18], [used, used], color=colour, linewidth=2.6)
            what = "lower bound used" if key == "numerator" else "upper bound used"
            notes.append((i, p, f"estimate {fmt(p)}\n{what}:\n{fmt(used)}", colour))
        ymax = min(1.0, max(tops + [1e-6]) * 1.3)
        for i, p, text, colour in notes:       # numerator's text to the left, denominator's right
            y = min(max(p, 0.12 * ymax), 0.85 * ymax)
            ax.text(i - 0.24 if i == 0 else i + 0.24, y, text, va="center",
                    ha="right" if i == 0 else "left", fontsize=8, color=colour)
        ax.set_xticks([0, 1], [f"numerator\n(run on {num_side})", f"denominator\n(run on {den_side})"])
        ax.set_xlim(-1.25, 2.25)
        ax.set_ylim(0, ymax)
        ax.set_ylabel("P[event] (probability)")
        ax.set_title(_short(f"event: {attack.get('event', '?')}", 55))
        if has_curve:
            ax2 = axes[0, 1]
            runs = _finite(curve["runs_per_side"])
            eps = _finite(curve["epsilon_lower_bound"])
            ax2.plot(runs, eps, marker="o", markersize=3.5, color=BLUE, linewidth=1.6,
                     label="ε lower bound")
            top = float(np.nanmax(np.concatenate([eps, [1e-9]])))
            shown = [top]
            if _hline(ax2, claim_eps, "claimed ε", VERMILLION, "--", scale_top=max(top, maxdet or 0)):
                shown.append(float(claim_eps))
            if _hline(ax2, maxdet, "max detectable ε", GREY, ":", scale_top=max(top, claim_eps or 0)):
                shown.append(float(maxdet))
            ax2.set_ylim(0, max(shown) * 1.15 or 1)
            if runs.size > 1 and runs.min() > 0 and runs.max() / runs.min() > 20:
                ax2.set_xscale("log")
            ax2.set_xlabel("runs per side (selection + held-out halves)")
            ax2.set_ylabel("ε lower bound (nats)")
            ax2.set_title("ε lower bound vs budget")
            ax2.legend(loc="center right", framealpha=0.9)
        fig.suptitle(_short(f"{attack.get('scenario', attack.get('name', '?'))} (black-box): "
                            f"ε_lb = {fmt(attack.get('epsilon_lower_bound'))}", 90),
                     fontsize=10.5)
        fig.tight_layout()
        return _save(fig, path)


# ----------------------------------------------------------------- white-box

def per_round_figure(doc: dict, attack: dict, path: str) -> str:
    """Figure 1 of App. G.1: P_t(2) on both sides and ε_t along the history."""
    d = attack.get("details") or {}
    horizon = d.get("horizon")
    claim = (attack.get("claim_compared") or {}).get("value")
    what = (attack.get("claim_compared") or {}).get("what", "claim")
    with plt.rc_context(_STYLE):
        fig, (top, bot) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for key, label, colour, style in (("p_arm2", "P_t(2) on ℓ", BLUE, "-"),
                                          ("p_prime_arm2", "P′_t(2) on ℓ′", VERMILLION, "--")):
            if key in d and d[key]:
                idx, y = thin(d[key], keep="stride")
                x = _spread(len(d[key]), horizon)[idx]
                top.plot(x, y, color=colour, linestyle=style, linewidth=1.5, label=label)
        ys = [v for k in ("p_arm2", "p_prime_arm2") for v in (d.get(k) or []) if v]
        if ys and min(ys) > 0 and max(ys) / min(ys) > 50:
            top.set_yscale("log")
        top.set_ylabel("probability of arm 2")
        top.set_title(_short(f"history: {d.get('history', '?')}", 90))
        top.legend(loc="best", framealpha=0.9)
        eps_t = d.get("epsilon_t") or []
        if eps_t:
            idx, y = thin(eps_t, keep="max")
            x = _spread(len(eps_t), horizon)[idx]
            bot.plot(x, y, color=BLACK, linewidth=1.5, label="ε_t = max_i |ln P_t(i) − ln P′_t(i)|")
        if claim is not None and math.isfinite(float(claim)):
            bot.axhline(claim, color=VERMILLION, linestyle="--", linewidth=1.4,
                        label=f"{what} = {fmt(claim)}")
        first = d.get("first_round_exceeding_claim")
        if first:
            bot.axvline(first, color=GREY, linestyle=":", linewidth=1.2,
                        label=f"first round above the claim: {fmt(first)}")
        bot.set_xlabel("round t")
        bot.set_ylabel("per-round privacy loss ε_t (nats)")
        bot.legend(loc="best", framealpha=0.9)
        fig.suptitle(f"{attack.get('name', '?')} (white-box, per-round): max ε_t = "
                     f"{fmt(attack.get('epsilon_lower_bound'))}", fontsize=10.5)
        fig.tight_layout()
        return _save(fig, path)


def search_figure(doc: dict, attack: dict, path: str) -> str:
    """Cumulative exact loss ln P_ℓ(x_1..t) − ln P_ℓ′(x_1..t) along the
    certificate, with the claim it is compared with."""
    d = attack.get("details") or {}
    curve = d.get("cumulative_loss") or []
    length = d.get("length") or len(curve)
    claim = doc.get("claim") or {}
    per_round = claim.get("per_round_epsilon")
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(8, 3.8))
        if curve:
            idx, y = thin(curve, keep="stride")
            n = len(curve)
            # the document's curve keeps block maxima; place each at its block's end
            ends = (np.linspace(0, length, n + 1).astype(int)[1:] if length > n
                    else np.arange(1, n + 1))
            x = ends[idx].astype(float)
            ax.plot(x, y, color=BLUE, linewidth=1.7, label="exact loss L(x₁..x_t) of the certificate")
            ax.plot([x[-1]], [y[-1]], "o", color=BLUE)
            ax.annotate(f"L(x) = {fmt(attack.get('epsilon_lower_bound'))}", (x[-1], y[-1]),
                        xytext=(-8, 8), textcoords="offset points", ha="right", fontsize=8.5)
        if curve and per_round is not None:
            above = np.nonzero(y > per_round * x)[0]
            if above.size:
                ax.axvline(x[above[0]], color=GREY, linestyle=":", linewidth=1.2,
                           label=f"loss exceeds the composed claim from t ≈ {fmt(x[above[0]])}")
        if per_round is not None:
            t = np.array([1.0, float(length)])
            ax.plot(t, per_round * t, color=VERMILLION, linestyle="--", linewidth=1.4,
                    label=f"composed claim ε_t·t (ε_t = {fmt(per_round)})")
        elif claim.get("epsilon") is not None:
            ax.axhline(claim["epsilon"], color=VERMILLION, linestyle="--", linewidth=1.4,
                       label=f"claimed ε = {fmt(claim['epsilon'])}")
        ax.set_xlabel("round t (prefix length of the output x)")
        ax.set_ylabel("privacy loss (nats)")
        ax.legend(loc="upper left", framealpha=0.9)
        ax.set_title(f"{attack.get('name', '?')} (white-box, worst-output search): exact loss "
                     f"along the certificate output")
        fig.tight_layout()
        return _save(fig, path)


def pld_figure(doc: dict, attack: dict, path: str) -> str:
    """Left: histogram of the exact privacy loss L of outputs sampled on ℓ.
    Right: δ(ε) (point estimate and lower confidence bound) with the claim."""
    d = attack.get("details") or {}
    hist = d.get("histogram") or {}
    dc = d.get("delta_curve") or {}
    claim = doc.get("claim") or {}
    c_eps, c_delta = claim.get("epsilon"), claim.get("delta") or 0.0
    with plt.rc_context(_STYLE):
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.2, 3.6))
        counts = _finite(hist.get("counts") or [])
        edges = _finite(hist.get("edges") or [])
        if counts.size and edges.size == counts.size + 1:
            if counts.size > MAX_POINTS:     # merge bins defensively
                k = int(math.ceil(counts.size / MAX_POINTS))
                cut = np.arange(0, counts.size, k)
                counts, edges = np.add.reduceat(counts, cut), np.append(edges[cut], edges[-1])
            a1.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=SKY,
                   edgecolor=BLUE, linewidth=0.4, label="sampled outputs")
            nz = counts[counts > 0]
            if nz.size and nz.max() / nz.min() > 100:
                a1.set_yscale("log")
            lo, hi = edges[0], edges[-1]
            if c_eps is not None and lo <= c_eps <= hi + (hi - lo) * 0.5:
                a1.axvline(c_eps, color=VERMILLION, linestyle="--", linewidth=1.4,
                           label=f"claimed ε = {fmt(c_eps)}")
            elif c_eps is not None:
                a1.text(0.98, 0.97, f"claimed ε = {fmt(c_eps)}\n(off scale)", transform=a1.transAxes,
                        ha="right", va="top", fontsize=8, color=VERMILLION)
            a1.legend(loc="upper left", framealpha=0.9)
        a1.set_xlabel("privacy loss L(x) = ln P_ℓ(x) − ln P_ℓ′(x) (nats)")
        a1.set_ylabel("number of outputs")
        a1.set_title(f"loss distribution ({fmt((attack.get('counts') or {}).get('samples'))} samples)")
        eps = _finite(dc.get("epsilon") or [])
        if eps.size:
            idx, _ = thin(eps, keep="stride")
            e = eps[idx]
            pt = _finite(dc.get("delta_point") or [np.nan] * eps.size)[idx]
            lw = _finite(dc.get("delta_lower") or [np.nan] * eps.size)[idx]
            a2.plot(e, pt, color=BLUE, linewidth=1.6, marker=".", label="δ(ε) point estimate")
            a2.plot(e, lw, color=ORANGE, linestyle="--", linewidth=1.6,
                    label="δ(ε) lower confidence bound")
        max_loss = d.get("max_loss")
        zoom = (eps.size and c_eps is not None and max_loss is not None and max_loss > 0
                and c_eps > 20 * max_loss and np.count_nonzero(eps <= max_loss) < 5)
        if zoom and counts.size and edges.size == counts.size + 1:
            # The document's ε grid is far coarser than the loss range; show the
            # same estimator on the histogram's bins (approximate) where δ(ε) > 0.
            fine = np.linspace(0, max_loss, 60)
            centres = (edges[:-1] + edges[1:]) / 2
            w = counts / max(counts.sum(), 1)
            approx = [(w * np.clip(1 - np.exp(e - centres), 0, None)).sum() for e in fine]
            a2.plot(fine, approx, color=SKY, linewidth=1.4, linestyle="-.",
                    label="δ(ε) from the histogram (binned, approximate)")
            a2.set_xlim(-0.03 * max_loss, max_loss * 1.08)
        if eps.size and max_loss is not None:
            a2.text(0.98, 0.45, f"largest sampled loss {fmt(max_loss)}:\n"
                    f"δ(ε) = 0 for every larger ε", transform=a2.transAxes, ha="right",
                    fontsize=8)
        if zoom:
            a2.text(0.98, 0.3, f"claim (ε = {fmt(c_eps)}, δ = {fmt(c_delta)})\noff scale, to the right",
                    transform=a2.transAxes, ha="right", fontsize=8, color=VERMILLION)
        elif c_eps is not None:
            a2.plot([c_eps], [c_delta], marker="*", markersize=13, color=VERMILLION, linestyle="none",
                    label=f"claim (ε = {fmt(c_eps)}, δ = {fmt(c_delta)})", zorder=5)
        a2.set_xlabel("ε (nats)")
        a2.set_ylabel("δ(ε)")
        a2.set_ylim(bottom=0)
        a2.set_title("δ(ε) = E[(1 − e^(ε−L))₊]")
        a2.legend(loc="upper right", framealpha=0.9)
        fig.suptitle(f"{attack.get('name', '?')} (white-box, loss distribution, scope "
                     f"{attack.get('scope', '?')})", fontsize=10.5)
        fig.tight_layout()
        return _save(fig, path)


# ----------------------------------------------------------------- regret

def regret_figure(doc: dict, path: str) -> Optional[str]:
    """Mean regret with its confidence band, and the paper's bound if stated."""
    r = doc.get("regret")
    if not r or not r.get("t"):
        return None
    idx, _ = thin(r["t"], keep="stride")
    t = _finite(r["t"])[idx]
    mean, lo, hi = (_finite(r[k])[idx] for k in ("mean", "lower", "upper"))
    bound = r.get("bound")
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(8, 3.8))
        ax.fill_between(t, lo, hi, color=SKY, alpha=0.45, linewidth=0,
                        label=f"{r.get('confidence', 0.95):.0%} confidence band")
        ax.plot(t, mean, color=BLUE, linewidth=1.8,
                label=f"mean regret ({fmt(r.get('runs'))} runs)")
        top = float(np.nanmax(hi)) if hi.size else 1.0
        if bound and bound.get("values"):
            b = _finite(bound["values"])[idx]
            ax.plot(t, b, color=VERMILLION, linestyle="--", linewidth=1.5,
                    label=_short(f"bound {bound.get('formula', '')} ({bound.get('source', '')})", 80))
            if np.nanmax(b) > 30 * max(top, 1.0) and np.all(b > 0) and np.nanmax(mean) > 0:
                ax.set_yscale("log", nonpositive="mask")
        if t.size > 1 and t.min() > 0 and t.max() / t.min() > 20:
            ax.set_xscale("log")
        ax.set_xlabel("round t")
        best = "best expert's" if (doc.get("algorithm") or {}).get("experts") else "best arm's"
        ax.set_ylabel(f"regret{', log scale' if ax.get_yscale() == 'log' else ''} "
                      f"(cumulative loss − {best})")
        alg = doc.get("algorithm") or {}
        ax.set_title(_short(f"{alg.get('name', '?')}: regret on instance '{r.get('instance', '?')}'", 90))
        ax.legend(loc="upper left", framealpha=0.9)
        fig.tight_layout()
        return _save(fig, path)


# ----------------------------------------------------------------- all

WHITE = {"per-round": per_round_figure, "search": search_figure, "pld": pld_figure}


def figure_for(doc: dict, attack: dict, path: str) -> Optional[str]:
    """The figure that belongs to one attack entry, or None if there is none."""
    if attack.get("mode") == "black-box":
        return blackbox_figure(doc, attack, path)
    fn = WHITE.get(attack.get("kind"))
    return fn(doc, attack, path) if fn else None
