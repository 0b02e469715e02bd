"""Figures for audit reports (PNG, matplotlib's Agg backend, no display needed).

Every function takes the ``audit-result/1`` document (and, for per-attack
figures, one entry of ``doc["attacks"]``), writes one PNG and returns its
path.  Colours are the Okabe–Ito palette, which stays distinguishable for the
common forms of colour blindness; line styles differ as well so the figures
also read in grey scale.  Every series is thinned to at most ``MAX_POINTS``
points before plotting, so even a document carrying full-length curves gives
small files.

May import: matplotlib, numpy, PIL (pillow, matplotlib's own dependency) and the standard
library only: it draws from
result documents.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import os
import re
from functools import lru_cache
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
PALETTE = 96        # colours of a saved figure (``_palette``)
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


# A figure's stamp (a digest of what it is drawn from, ``drawn_from``) is
# written into the PNG, so re-rendering the same document into the same
# folder reuses every figure that would come out the same.
STAMP_KEY = "audit-figure"
_STAMP: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("figure_stamp",
                                                                      default=None)


@lru_cache(maxsize=1)
def _code_digest() -> str:
    with open(__file__, "rb") as fh:
        code = fh.read()
    return hashlib.sha256(code + matplotlib.__version__.encode()).hexdigest()


def drawn_from(*parts) -> str:
    """The stamp of a figure drawn from ``parts`` (JSON-able) by this code."""
    text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=True)
    return hashlib.sha256((_code_digest() + text).encode()).hexdigest()[:32]


def stamp_of(path: str) -> Optional[str]:
    """The stamp written into a PNG by ``_save``, or None (no file, no stamp)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                return None
            while True:
                head = fh.read(8)
                if len(head) < 8:
                    return None
                size, kind = int.from_bytes(head[:4], "big"), head[4:]
                if kind in (b"IDAT", b"IEND"):
                    return None
                data = fh.read(size)
                fh.read(4)                                    # CRC
                if kind == b"tEXt" and data.startswith(STAMP_KEY.encode() + b"\0"):
                    return data[len(STAMP_KEY) + 1:].decode("latin-1")
    except OSError:
        return None


@contextlib.contextmanager
def stamped(stamp: Optional[str]):
    """Figures saved inside the block carry ``stamp``."""
    token = _STAMP.set(stamp)
    try:
        yield
    finally:
        _STAMP.reset(token)


def _save(fig, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}.png"
    meta = {"Software": None}
    if _STAMP.get():
        meta[STAMP_KEY] = _STAMP.get()
    try:
        fig.savefig(tmp, dpi=DPI, format="png", bbox_inches="tight", metadata=meta)
        _palette(tmp)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _palette(path: str) -> None:
    """Rewrite the PNG at ``path`` with a palette of ``PALETTE`` colours
    (its text chunks, the stamp among them, kept).  A line plot has a few
    colours and their anti-aliased edges: the palette image looks the same
    and is a quarter of the size (about 15 kB a figure), which keeps every
    report, and the tracked gallery, small."""
    from PIL import Image, PngImagePlugin
    with Image.open(path) as im:
        im.load()
        info = PngImagePlugin.PngInfo()
        for key, value in im.text.items():
            info.add_text(key, value)
        small = im.quantize(colors=PALETTE, method=Image.Quantize.FASTOCTREE)
    small.save(path, format="PNG", optimize=True, pnginfo=info)


def _short(text: str, n: int = 70) -> str:
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def _wrap(text: str, width: int, lines: int) -> str:
    """Text on at most ``lines`` lines of ``width`` characters (the last
    one shortened with … if need be)."""
    import textwrap
    parts = textwrap.wrap(str(text), width) or [""]
    if len(parts) > lines:
        parts = parts[:lines - 1] + [_short(" ".join(parts[lines - 1:]), width)]
    return "\n".join(parts)


def eng(x, _pos=None) -> str:
    """A tick label in engineering notation: 500, 20k, 100k, 1M, 2.5M."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(x):
        return fmt(x)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            v = x / scale
            return (f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.3g}") + suffix
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.3g}"


def _count_axis(ax, values, max_ticks: int = 5) -> None:
    """An x axis of counts (runs, rounds): log scale over a wide range, few ticks,
    labels in engineering notation (20k, 100k, 1M) so they never collide."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
    v = np.asarray([x for x in _finite(values) if math.isfinite(x) and x > 0])
    if v.size > 1 and v.max() / v.min() > 20:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
        ax.xaxis.set_minor_formatter(NullFormatter())
        # keep at most max_ticks labelled ticks inside the data range
        lo, hi = v.min(), v.max()
        ticks = [t for t in (m * 10 ** e for e in range(int(math.floor(math.log10(lo))),
                                                        int(math.ceil(math.log10(hi))) + 1)
                             for m in (1, 2, 5)) if lo / 1.05 <= t <= hi * 1.05]
        while len(ticks) > max_ticks:
            ticks = ticks[::2]
        if len(ticks) >= 2:
            ax.set_xticks(ticks)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=max_ticks, integer=True, min_n_ticks=3))
    ax.xaxis.set_major_formatter(FuncFormatter(eng))


def _legend_below(ax, ncol: int = 2, **kw):
    """A legend under the axes (below the x label), never over the data."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    if max(len(str(t)) for t in labels) > 45:
        ncol = 1                              # long labels side by side would be far too wide
    # Just below what the x axis draws (tick labels and label), measured, so
    # a long x label never runs under the legend.
    top = -0.24
    try:
        fig = ax.figure
        box = ax.xaxis.get_tightbbox(fig.canvas.get_renderer())
        if box is not None:
            top = ax.transAxes.inverted().transform((0, box.y0))[1] - 0.03
    except Exception:  # noqa: BLE001 - a backend without a renderer keeps the default
        pass
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, top),
                     ncol=min(ncol, len(handles)), frameon=False, **kw)


def _legend_right(ax, **kw):
    """A legend to the right of the axes, outside the plotting area."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     frameon=False, **kw)


def _log_axis(ax, values, axis: str = "x", max_ticks: int = 5) -> None:
    """A log axis with a few labelled ticks at 1, 2, 5 × 10^k inside the
    data's range (short labels such as 2e-05 that never collide); no minor
    labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter
    v = np.asarray([x for x in _finite(values) if math.isfinite(x) and x > 0])
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target.set_minor_formatter(NullFormatter())
    if v.size == 0:
        return
    lo, hi = v.min(), v.max()
    ticks = [m * 10.0 ** e for e in range(int(math.floor(math.log10(lo))) - 1,
                                          int(math.ceil(math.log10(hi))) + 1)
             for m in (1, 2, 5) if lo / 1.6 <= m * 10.0 ** e <= hi * 1.6]
    while len(ticks) > max_ticks:
        ticks = ticks[::2]
    if ticks:
        target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(
        lambda x, _pos: (f"{x:g}" if 1e-3 <= abs(x) < 1e4 else f"{x:.0e}")))


def _round_axis(ax) -> None:
    """Round numbers on a linear x axis in engineering notation (20k, 1M)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator
    if ax.get_xscale() == "linear":
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(eng))


def _off_scale(ax, value, label, colour, style):
    """A legend entry (an up-arrow marker) for a reference value above the plotted range."""
    ax.plot([], [], color=colour, linestyle="none", marker="^", markersize=7,
            label=f"{label} = {fmt(value)} (above the plotted range)")


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
    profile = attack.get("privacy_profile") or attack.get("claim_curve")
    panels = 1 + has_curve + bool(profile)
    ratios = [1.2, 1, 1.1][:panels] if panels > 1 else None
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, panels, figsize=(4.9 * panels, 3.7), squeeze=False,
                                 gridspec_kw={"width_ratios": ratios} if ratios else None)
        if profile:
            _profile_panel(axes[0, panels - 1], attack, profile)
        ax = axes[0, 0]
        direction = attack.get("direction", "l>l'")
        num_side, den_side = ("ℓ", "ℓ′") if direction != "l'>l" else ("ℓ′", "ℓ")
        # On coupled runs tested by a bet, the two intervals are for reading
        # only: the bound is the bet's, which no per-side interval shows.
        bet = (attack.get("coupled") or {}).get("test") == "coupled bet"
        tops, ticks = [], []
        for i, (key, side, colour, marker) in enumerate(
                (("numerator", num_side, BLUE, "o"), ("denominator", den_side, ORANGE, "s"))):
            e = est.get(key)
            what = "numerator" if key == "numerator" else "denominator"
            if not e:
                ticks.append(f"{what}\n(run on {side})")
                continue
            p, lo, hi = float(e["p_hat"]), float(e["lower"]), float(e["upper"])
            tops.append(hi)
            ax.errorbar([i], [p], yerr=[[max(p - lo, 0)], [max(hi - p, 0)]], fmt=marker,
                        color=colour, capsize=6, markersize=7, elinewidth=1.6)
            if bet:
                ticks.append(f"{what} (run on {side})\nestimate {fmt(p, 3)}\n"
                             f"(bound: the coupled test's)")
                continue
            used = lo if key == "numerator" else hi
            ax.plot([i - 0.18, i + 0.18], [used, used], color=colour, linewidth=2.6)
            # The numbers go under each point, in its tick label: text inside
            # the axes collides with the axis or the next panel.
            bound = "lower bound used" if key == "numerator" else "upper bound used"
            ticks.append(f"{what} (run on {side})\nestimate {fmt(p, 3)}\n{bound}: {fmt(used, 3)}")
        ymax = min(1.0, max(tops + [1e-6]) * 1.3)
        ax.set_xticks([0, 1], ticks)
        ax.set_xlim(-0.7, 1.7)
        ax.set_ylim(0, ymax)
        ax.set_ylabel("P[event] (probability)")
        ax.set_title(_wrap(f"event: {attack.get('event', '?')}", 60, 2))
        if has_curve:
            ax2 = axes[0, 1]
            runs = _finite(curve["runs_per_side"])
            eps = _finite(curve["epsilon_lower_bound"])
            ax2.plot(runs, eps, marker="o", markersize=3.5, color=BLUE, linewidth=1.6,
                     label="ε lower bound")
            data_top = float(np.nanmax(np.concatenate([eps, [0.0]])))
            # Scale to the data and the claim; a reference far above them (a
            # composed claim of 400,000, or a max-detectable ε of 10 next to an
            # ε_lb of 0.5) becomes a labelled off-scale entry instead of
            # squashing the curve onto the floor.
            refs = [(v, lab, col, sty) for v, lab, col, sty in
                    ((claim_eps, "claimed ε", VERMILLION, "--"),
                     (maxdet, "max detectable ε", GREY, ":"))
                    if v is not None and math.isfinite(float(v))]
            top = data_top
            if claim_eps is not None and math.isfinite(float(claim_eps)) and (
                    float(claim_eps) <= 5 * max(data_top, 0.2)):
                top = max(top, float(claim_eps))
            if top <= 0:   # nothing to scale to: the smallest reference, or 1
                top = min([float(v) for v, *_ in refs] + [1.0]) if refs else 1.0
            for v, lab, col, sty in refs:
                v = float(v)
                if v <= top * 1.35:
                    top = max(top, v)
                    ax2.axhline(v, color=col, linestyle=sty, linewidth=1.3,
                                label=f"{lab} = {fmt(v)}")
                else:
                    _off_scale(ax2, v, lab, col, sty)
            ax2.set_ylim(0, top * 1.15)
            _count_axis(ax2, runs)
            ax2.set_xlabel("runs per side (pilot + held-out blocks)" if attack.get("coupled")
                           else "runs per side (selection + held-out halves)")
            ax2.set_ylabel("ε lower bound (nats)")
            ax2.set_title("ε lower bound vs budget")
            _legend_below(ax2, ncol=1)
        fig.suptitle(_short(f"{attack.get('scenario', attack.get('name', '?'))} (black-box): "
                            f"ε_lb = {fmt(attack.get('epsilon_lower_bound'))}", 90),
                     fontsize=10.5)
        fig.tight_layout()
        return _save(fig, path)


def _profile_panel(ax, attack: dict, profile: dict) -> None:
    """The certified privacy profile of the chosen event: δ_lb(ε) = p_lo −
    e^ε q_hi with the band up to the point estimate p̂ − e^ε q̂, the claim's
    δ(ε) curve (a μ-GDP or ρ-zCDP claim's, or the one every (ε, δ)-DP
    mechanism lies under), and the point that decides."""
    eps = _finite(profile["epsilon"])
    if "delta_lower" not in profile:        # a bet: one certified point on the claim's curve
        claimed = _finite(profile["claim_delta"])
        c = attack.get("claim") or {}
        words = ((c.get("curve") or {}).get("claim")
                 or f"ε = {fmt(c.get('epsilon'))}" + (f", δ = {fmt(c['delta'])}"
                                                      if c.get("delta") else ""))
        ax.plot(eps, claimed, color=VERMILLION, linestyle="--", linewidth=1.4,
                label=f"claimed δ(ε): {words}")
        pe, pd = float(profile["point"]["epsilon"]), float(profile["point"]["delta"])
        above = bool(profile["point"].get("above"))
        ax.plot([pe], [pd], marker="o", color=VERMILLION if above else BLUE, markersize=6,
                label=f"certified: ε ≥ {fmt(pe)} at δ = {fmt(pd)} (the coupled bet's one point)")
        ax.set_xlim(0, float(eps[-1]))
        ax.set_ylim(0, min(1.0, float(np.max(claimed)) * 1.1 + 1e-3))
        ax.set_xlabel("ε (nats)")
        ax.set_ylabel("δ(ε)")
        ax.set_title("the claim's privacy profile")
        _legend_below(ax, ncol=1)
        return
    lower = _finite(profile["delta_lower"])
    est = attack.get("estimates") or {}
    p = float((est.get("numerator") or {}).get("p_hat", 0.0))
    q = float((est.get("denominator") or {}).get("p_hat", 0.0))
    point = np.maximum(0.0, p - np.exp(eps) * q)
    claim = attack.get("claim") or {}
    if profile.get("claim_delta") is not None:
        claimed = _finite(profile["claim_delta"])
        words = (claim.get("curve") or {}).get("claim", "claim")
    else:
        e0, d0 = float(claim.get("epsilon", 0.0)), float(claim.get("delta", 0.0))
        claimed = d0 + (1 - d0) * np.maximum(0.0, math.exp(e0) - np.exp(eps)) / (1 + math.exp(e0))
        words = f"ε = {fmt(e0)}" + (f", δ = {fmt(d0)}" if d0 else "")
    ax.fill_between(eps, lower, np.maximum(point, lower), color=BLUE, alpha=0.18,
                    label="estimate band")
    ax.plot(eps, lower, color=BLUE, linewidth=1.8, label="certified δ_lb(ε)")
    ax.plot(eps, claimed, color=VERMILLION, linestyle="--", linewidth=1.4,
            label=f"claimed δ(ε): {words}")
    gap = lower - claimed
    k = int(np.argmax(gap))
    above = bool(gap[k] > 0)
    ax.plot([eps[k]], [lower[k]], marker="o", color=VERMILLION if above else GREY,
            markersize=6, label=("decides: above the claim" if above else "closest to the claim"))
    top = max(float(np.max(point)), float(np.max(lower)), 1e-3)
    ax.set_ylim(0, min(1.0, top * 1.3))
    ax.set_xlim(0, float(eps[-1]))
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("δ(ε)")
    mu = profile.get("mu_lower")
    ax.set_title("privacy profile of the event" + (f" (μ_lb = {fmt(mu)})" if mu else ""))
    _legend_below(ax, ncol=1)


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
        _legend_right(top)
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
        _round_axis(bot)
        _legend_right(bot)
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
        _round_axis(ax)
        from matplotlib.ticker import FuncFormatter
        ax.yaxis.set_major_formatter(FuncFormatter(eng))
        ax.margins(y=0.12)
        _legend_below(ax, ncol=2)
        ax.set_title(f"{attack.get('name', '?')} (white-box, worst-output search): exact loss "
                     f"along the certificate output")
        fig.tight_layout()
        return _save(fig, path)


def pld_figure(doc: dict, attack: dict, path: str) -> str:
    """Left: histogram of the exact privacy loss L of outputs sampled on ℓ.
    Right: δ(ε) (point estimate and lower confidence bound) with the claim,
    the claimed δ(ε) curve when the algorithm names its mechanism (the gap to
    the lower bound shaded) and the pair's exact worst case when computed."""
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
                a1.plot([], [], color=VERMILLION, linestyle="none", marker=">" if c_eps > hi else "<",
                        label=f"claimed ε = {fmt(c_eps)} (off the range, to the "
                              f"{'right' if c_eps > hi else 'left'})")
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
            # The claimed curve (the mechanism the claim rests on), on the same
            # grid: the shaded gap is what the claim allows beyond the evidence.
            cp = d.get("claimed_profile") or {}
            c_e = _finite(cp.get("epsilon") or [])
            c_d = _finite(cp.get("delta") or [])
            if c_e.size and c_e.size == c_d.size:
                same = c_e.size == eps.size and np.allclose(c_e, eps)
                ce, cd = (c_e[idx], c_d[idx]) if same else (c_e, c_d)
                a2.plot(ce, cd, color=GREEN, linewidth=1.6,
                        label="claimed δ(ε) (mechanism, dp_accounting)")
                if same:
                    a2.fill_between(e, lw, cd, where=cd >= lw, color=GREEN, alpha=0.12,
                                    linewidth=0, label="gap: claimed − lower bound")
            cc = d.get("claim_curve") or {}
            k_e, k_d = _finite(cc.get("epsilon") or []), _finite(cc.get("delta") or [])
            if k_e.size and k_e.size == k_d.size:
                a2.plot(k_e, k_d, color=VERMILLION, linestyle="-.", linewidth=1.4,
                        label=f"the claim's δ(ε): {cc.get('claim', '?')}")
                if cc.get("above"):
                    a2.plot([cc["at_epsilon"]], [float(np.interp(cc["at_epsilon"], eps,
                                                                 _finite(dc["delta_lower"])))],
                            marker="o", color=VERMILLION, label="decides: above the claim")
        worst = attack.get("pair_worst_case") or {}
        if worst.get("epsilon") is not None and math.isfinite(float(worst["epsilon"])):
            a2.axvline(float(worst["epsilon"]), color=PURPLE, linestyle=":", linewidth=1.4,
                       label=f"worst case for this pair: "
                             f"{'≤ ' if worst.get('upper_bound') else ''}ε = {fmt(worst['epsilon'])} at "
                             f"δ = {fmt(worst.get('delta'))}")
        max_loss = d.get("max_loss")
        # Where the losses live: δ(ε) > 0 only for ε below the largest sampled loss.
        live = [float(max_loss)] if max_loss is not None and math.isfinite(float(max_loss)) else []
        if eps.size:
            pt_all = _finite(dc.get("delta_point") or [np.nan] * eps.size)
            pos = eps[np.nan_to_num(pt_all) > 0]
            if pos.size:
                live.append(float(pos.max()))
        x_hi = max(live) * 1.1 if live and max(live) > 0 else None
        off = (c_eps is not None and x_hi is not None and eps.size and c_eps > 4 * x_hi)
        if off and counts.size and edges.size == counts.size + 1 and \
                np.count_nonzero(eps <= x_hi) < 5:
            # The document's ε grid is far coarser than the loss range; show the
            # same estimator on the histogram's bins (approximate) where δ(ε) > 0.
            fine = np.linspace(0, max(live), 60)
            centres = (edges[:-1] + edges[1:]) / 2
            w = counts / max(counts.sum(), 1)
            approx = [(w * np.clip(1 - np.exp(e - centres), 0, None)).sum() for e in fine]
            a2.plot(fine, approx, color=SKY, linewidth=1.4, linestyle="-.",
                    label="δ(ε) from the histogram (binned, approximate)")
        if off:
            x_lo = min(0.0, float(np.nanmin(eps)))
            a2.set_xlim(x_lo - 0.03 * (x_hi - x_lo), x_hi)
            a2.annotate(f"claim (ε = {fmt(c_eps)}, δ = {fmt(c_delta)})\noff the range, to the right",
                        xy=(1.0, 0.04), xycoords="axes fraction", xytext=(0.97, 0.3),
                        textcoords="axes fraction", ha="right", va="bottom", fontsize=8,
                        color=VERMILLION,
                        arrowprops={"arrowstyle": "->", "color": VERMILLION, "lw": 1.2})
        elif c_eps is not None:
            a2.plot([c_eps], [c_delta], marker="*", markersize=13, color=VERMILLION, linestyle="none",
                    label=f"claim (ε = {fmt(c_eps)}, δ = {fmt(c_delta)})", zorder=5, clip_on=False)
        if eps.size and max_loss is not None:
            # In the legend, not over the curves (they can pass anywhere).
            a2.plot([], [], linestyle="none", marker="",
                    label=f"largest sampled loss {fmt(max_loss)}: δ(ε) = 0 for every larger ε")
        a2.set_xlabel("ε (nats)")
        a2.set_ylabel("δ(ε)")
        a2.set_ylim(bottom=0)
        a2.set_title("δ(ε) = E[(1 − e^(ε−L))₊]")
        fig.suptitle(f"{attack.get('name', '?')} (white-box, loss distribution, scope "
                     f"{attack.get('scope', '?')})", fontsize=10.5)
        fig.tight_layout()
        # Legends after the layout, so their measured place under each x axis
        # holds (the saved figure grows to include them).
        _legend_below(a1, ncol=1)
        _legend_below(a2, ncol=1)
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
        ax.set_ylabel(f"regret{', log scale' if ax.get_yscale() == 'log' else ''}\n"
                      f"(cumulative loss − {best})")
        alg = doc.get("algorithm") or {}
        ax.set_title(_short(f"{alg.get('name', '?')}: regret on instance '{r.get('instance', '?')}'", 90))
        _round_axis(ax)
        _legend_below(ax, ncol=3)
        fig.tight_layout()
        return _save(fig, path)


def _exp_bracket(pair) -> tuple[float, float, float]:
    """(lower, middle, upper) of a probability from its log bracket."""
    lo, hi = (float(v) for v in pair)
    mid = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else hi
    return tuple(math.exp(v) if math.isfinite(v) else (0.0 if v < 0 else math.inf)
                 for v in (lo, mid, hi))


def _claim_line(ax, doc, attack, vertical: bool):
    cmp = attack.get("claim_compared") or {}
    value = cmp.get("value", (doc.get("claim") or {}).get("epsilon"))
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value):
        return None
    label = f"{cmp.get('what', 'claimed ε')} = {fmt(value)}"
    (ax.axvline if vertical else ax.axhline)(value, color=VERMILLION, linestyle="--",
                                             linewidth=1.4, label=label)
    return value


def integral_figure(doc: dict, attack: dict, path: str) -> str:
    """The outputs that certify the most, in the deciding direction: left,
    each one's probability (or density) on both sides with its certified
    bracket; right, its privacy loss, certified, against the claim.  The
    top row is the output that certifies the bound (under pure ε).  Two
    sparse vectors in parallel draw their halves' losses and their sum."""
    d = attack.get("details") or {}
    shown = d.get("certified_outputs") or {}
    rows = list(shown.get("rows") or [])
    density = shown.get("measure") == "density"
    halves = d.get("halves") or []
    if not rows and halves:
        total = sum(float(h.get("lower") or 0) for h in halves)
        rows = [{"output": f"{'first' if i == 0 else 'second'}: {h.get('output') or '?'}",
                 "loss": [h.get("lower"), h.get("lower")]} for i, h in enumerate(halves)]
        rows.insert(0, {"output": "the output (both halves)", "loss": [total, total]})
    direction = shown.get("direction") or d.get("direction") or "l>l'"
    num_side, den_side = ("ℓ", "ℓ′") if direction != "l'>l" else ("ℓ′", "ℓ")
    has_probs = any("log_numerator" in r for r in rows)
    n = max(len(rows), 1)
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 2 if has_probs else 1, figsize=(10.2 if has_probs else 6.4,
                                                                    1.7 + 0.42 * n),
                                 squeeze=False, sharey=True)
        ys = np.arange(n)[::-1].astype(float)            # the first row on top
        names = [_short(r.get("output", "?"), 34) for r in rows] or ["(no output)"]
        ax_loss = axes[0, -1]
        if has_probs:
            ax = axes[0, 0]
            lows, zero_marks = [], []
            for k, (key, side, colour, marker, dy) in enumerate(
                    (("log_numerator", num_side, BLUE, "o", 0.14),
                     ("log_denominator", den_side, ORANGE, "s", -0.14))):
                pts, lo_e, hi_e, zero = [], [], [], []
                for y, r in zip(ys, rows):
                    lo, mid, hi = _exp_bracket(r.get(key) or [-math.inf, -math.inf])
                    if mid <= 0:
                        zero.append(y + dy)
                        continue
                    pts.append((y + dy, mid))
                    lo_e.append(mid - lo)
                    hi_e.append(hi - mid)
                    lows.append(lo if lo > 0 else mid)
                if pts:
                    yy, xx = zip(*pts)
                    ax.errorbar(xx, yy, xerr=[lo_e, hi_e], fmt=marker, color=colour,
                                markersize=6, capsize=4, elinewidth=1.4,
                                label=f"{'density' if density else 'probability'} on {side} "
                                      f"(certified bracket)")
                if zero:
                    ax.plot([], [], marker="<", color=colour, linestyle="none",
                            label=f"impossible on {side} (probability 0)")
                    zero_marks.append((zero, colour))
            every = [v for r in rows for key in ("log_numerator", "log_denominator")
                     for v in _exp_bracket(r.get(key) or [-math.inf, -math.inf]) if 0 < v < math.inf]
            log = bool(every) and max(every) / min(every) > 10
            if log:          # probabilities across decades
                _log_axis(ax, every + [min(every) / 2], "x")
                left, right = min(every) / 2, max(every) * 1.6
            elif every:      # close together: a linear axis reads better
                lo_v, hi_v = min(every), max(every)
                pad = 0.25 * (hi_v - lo_v) or 0.05 * hi_v
                left, right = max(lo_v - pad, 0.0), hi_v + pad
                from matplotlib.ticker import MaxNLocator
                ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
            if every:
                ax.set_xlim(left=left, right=right)
                for zs, colour in zero_marks:
                    ax.plot([left] * len(zs), zs, marker="<", color=colour, linestyle="none",
                            clip_on=False)
            ax.set_xlabel(f"{'density' if density else 'probability'} of the output on each "
                          f"side" + (" (log scale)" if log else ""))
            ax.set_yticks(ys, names)
            ax.set_ylim(-0.7, n - 0.3)
            ax.set_title("each output on both sides")
        else:
            ax_loss.set_yticks(ys, names)
            ax_loss.set_ylim(-0.7, n - 0.3)
        finite_hi = []
        for y, r in zip(ys, rows):
            lo, hi = (float(v) if v is not None else math.nan for v in (r.get("loss") or
                                                                      [math.nan, math.nan]))
            if not math.isfinite(lo):
                continue
            finite_hi.append(hi if math.isfinite(hi) else lo)
            ax_loss.plot([lo, hi if math.isfinite(hi) else lo], [y, y], color=BLUE,
                         linewidth=5, solid_capstyle="butt", alpha=0.55)
            ax_loss.plot([lo], [y], "|", color=BLUE, markersize=12, markeredgewidth=2)
            if not math.isfinite(hi):
                ax_loss.plot([lo], [y], ">", color=BLUE, markersize=7)
        ax_loss.plot([], [], color=BLUE, linewidth=5, alpha=0.55,
                     label="privacy loss ln(P/P′), certified bracket (lower end: tick)")
        claim = _claim_line(ax_loss, doc, attack, vertical=True)
        top = max(finite_hi + [claim or 0.0, 1e-9])
        ax_loss.set_xlim(min(0.0, min(finite_hi + [0.0])) - 0.04 * top, top * 1.25)
        eps = attack.get("epsilon_lower_bound")
        if rows and eps is not None and float(eps) > 0 and math.isfinite(float(eps)):
            ax_loss.plot([float(eps)], [ys[0]], marker="*", markersize=13, color=BLACK,
                         linestyle="none", label=f"ε_lb = {fmt(eps)} (exact)", zorder=5)
        ax_loss.set_xlabel(f"privacy loss (nats), {num_side} over {den_side}")
        ax_loss.set_title("privacy loss of each output")
        fig.suptitle(_short(f"{attack.get('name', '?')} (white-box, integral): the outputs that "
                            f"certify the most, exact", 110), fontsize=10.5)
        fig.tight_layout()
        for a in axes[0]:            # after the layout, measured under each x axis
            _legend_below(a, ncol=1)
        return _save(fig, path)


def recursion_figure(doc: dict, attack: dict, path: str) -> str:
    """The run event "arm i at every round s..k" as k grows: left, its
    probability on both sides with the certified bracket the recursion gives
    (the state rounded up and down); right, the certified bracket of the
    exact log-ratio, with the claim."""
    d = attack.get("details") or {}
    ends = d.get("ends") or []
    lo, hi = d.get("log_ratio_lower_by_end") or [], d.get("log_ratio_upper_by_end") or []
    num_by, den_by = d.get("log_p_numerator_by_end") or [], d.get("log_p_denominator_by_end") or []
    direction = d.get("direction") or (d.get("certificate") or {}).get("direction") or "l>l'"
    num_side, den_side = ("ℓ", "ℓ′") if direction != "l'>l" else ("ℓ′", "ℓ")
    has_probs = bool(ends) and len(num_by) == len(ends) == len(den_by)
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 2 if has_probs else 1,
                                 figsize=(10.2 if has_probs else 8, 3.9), squeeze=False)
        ax = axes[0, -1]
        x = np.asarray(ends, dtype=float)
        if has_probs:
            ap = axes[0, 0]
            for by, side, colour, style in ((num_by, num_side, BLUE, "-"),
                                            (den_by, den_side, ORANGE, "--")):
                b = np.asarray(by, dtype=float)
                p_lo, p_hi = np.exp(b[:, 0]), np.exp(b[:, 1])
                ap.fill_between(x, p_lo, p_hi, color=colour, alpha=0.3, linewidth=0)
                ap.plot(x, np.sqrt(p_lo * p_hi), color=colour, linestyle=style, linewidth=1.6,
                        label=f"P(E) on {side}, certified bracket")
            every = np.exp(np.asarray(num_by + den_by, dtype=float)).ravel()
            _log_axis(ap, every, "y")
            ap.set_xlabel("last round k of the run event E")
            ap.set_ylabel("probability of E")
            event = d.get("event") or (d.get("certificate") or {}).get("event", "?")
            event = re.sub(r"\.\.\d+\b", "..k", str(event))     # the curve runs over k
            ap.set_title(_short(f"E = {{{event}}}", 60))
            _round_axis(ap)
        if ends:
            ax.fill_between(x, lo, hi, color=BLUE, alpha=0.25, linewidth=0,
                            label="exact log-ratio of the run event: certified bracket")
            ax.plot(x, lo, color=BLUE, linewidth=1.7, label="certified lower end")
            best = int(np.argmax(lo))
            ax.plot([x[best]], [lo[best]], "o", color=BLUE)
            ax.annotate(f"ε_lb = {fmt(attack.get('epsilon_lower_bound'))}", (x[best], lo[best]),
                        xytext=(0, 10), textcoords="offset points",
                        ha="right" if best > len(x) / 2 else "left", fontsize=8.5)
        _claim_line(ax, doc, attack, vertical=False)
        ax.set_xlabel("last round k of the run event E")
        ax.set_ylabel(f"ln P(E)/P′(E), {num_side} over {den_side} (nats)")
        _round_axis(ax)
        ax.margins(y=0.15)
        ax.set_title("exact log-ratio, certified")
        fig.suptitle(f"{attack.get('name', '?')} (white-box, recursion): run events, exact "
                     f"bounds", fontsize=10.5)
        fig.tight_layout()
        for a in axes[0]:
            _legend_below(a, ncol=1)
        return _save(fig, path)


# ----------------------------------------------------------------- all

WHITE = {"per-round": per_round_figure, "search": search_figure, "pld": pld_figure,
         "recursion": recursion_figure, "integral": integral_figure}


def figure_for(doc: dict, attack: dict, path: str) -> Optional[str]:
    """The figure that belongs to one attack entry, or None if there is none."""
    if attack.get("mode") == "black-box":
        return blackbox_figure(doc, attack, path)
    fn = WHITE.get(attack.get("kind"))
    return fn(doc, attack, path) if fn else None
