"""A class with one object per run, audited as written: the object is built
with what its constructor asks for, and driven through the methods it
already has.

Conventions (``SELECT``, ``UPDATE``, ``RELEASE``; or named with
``methods``):

* a **bandit** class chooses with ``select_arm()`` (or ``choose_arm``,
  ``select_action``, ``get_action``, ``pull``, ``act``, ``choose``, …) and
  learns with ``update(arm, reward)`` (or ``observe``, ``feedback``,
  ``receive_reward``, …).  A choosing method that takes an argument gets
  the round's expert advice (an (N, K) array).
* a **full-information** class has an update method with one argument:
  it receives the whole row (a fresh copy, shape (K,)).
* a **stream mechanism** has one method taking a round's input (the
  round's value, or its row when it has several) and returning what it
  releases: ``release`` (or ``answer``, ``respond``, ``process``,
  ``query``, ``step``, ``randomise``, ``privatise``, ``perturb``, …).  Whatever it returns is observed
  (``algorithms.as_written.outputs``).

Feedback is losses or rewards: the class attribute ``feedback = "loss"``
or ``"reward"`` decides, else the name of the update method's last
parameter (``loss``/``cost`` → losses), else rewards.  A reward is
``hi + lo − loss`` on the loss class [lo, hi] (1 − loss on [0, 1]), a map
the tool applies, so the audited losses stay in the claim's loss class.

One object per run: ``init`` builds ``runs`` objects, ``act`` and ``feed``
call each in turn; ``Learner.one_run`` drives one object over a whole input
(the exact replay's way in).  Each run's randomness is its own
(``algorithms.as_written.capture``): a seed parameter gets a fresh
integer (or the tool's generator, for ``rng``/``generator``), and numpy's
and Python's global sources are routed to the run's own states.

May import: numpy, ``algorithms.core``, ``algorithms.errors``,
``algorithms.as_written``.
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.core import Learner
from algorithms.errors import UserCodeError
from . import capture
from .capture import Streams
from .outputs import StepForm, leaves, step_form

SELECT = ("select_arm", "choose_arm", "select_action", "choose_action", "get_action", "get_arm",
          "select", "choose", "pull", "act", "play", "next_arm", "predict", "recommend")
UPDATE = ("update", "observe", "feedback", "receive_reward", "give_feedback", "update_arm",
          "learn", "reward")
RELEASE = ("release", "answer", "respond", "process", "query", "step", "randomise", "randomize",
           "privatise", "privatize", "perturb", "sanitise", "sanitize")
LOSS_WORDS = ("loss", "cost")
SEED_WORDS = 2 ** 63


@dataclass(frozen=True)
class Methods:
    """How the class is driven: ``kind`` "bandit", "full" or "stream", the
    method names, whether the choosing method takes the advice, and
    whether feedback is losses (``losses``) or rewards."""

    kind: str
    select: Optional[str]
    update: Optional[str]
    advice: bool
    losses: bool

    def describe(self) -> str:
        if self.kind == "stream":
            return f"{self.update}(value) per round"
        fb = "losses" if self.losses else "rewards (reward = hi + lo − loss)"
        arg = "advice" if self.advice else ""
        row = "row" if self.kind == "full" else "arm, feedback"
        return f"{self.select}({arg}) then {self.update}({row}); feedback as {fb}"


def _positional(fn) -> list:
    """The parameters a method takes by position, without ``self``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    kinds = inspect.Parameter
    return [p for p in sig.parameters.values()
            if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
            and p.name != "self"]


def _required(params) -> list:
    return [p for p in params if p.default is inspect.Parameter.empty]


def find_methods(cls, named: Optional[str], where: str, feedback: Optional[str]) -> Methods:
    """The methods to drive ``cls`` with: ``named`` ("select,update" or a
    stream's one method), else the first of each convention the class
    has.  ``feedback`` ("loss"/"reward") overrides the class attribute and
    the parameter names.  ``ValueError`` when none fits."""
    def has(name):
        return callable(getattr(cls, name, None))

    if named:
        parts = [p.strip() for p in named.split(",") if p.strip()]
        missing = [p for p in parts if not has(p)]
        if len(parts) not in (1, 2) or missing:
            raise ValueError(f"methods {named!r}: {where} has no method "
                             f"{missing[0]!r}" if missing else
                             f"methods {named!r}: give SELECT,UPDATE (a learner) or RELEASE "
                             f"(a stream mechanism)")
        select, update = (parts + [None])[:2] if len(parts) == 2 else (None, parts[0])
    else:
        select = next((m for m in SELECT if has(m)), None)
        update = next((m for m in UPDATE if has(m)), None)
        if select is None or update is None:
            select = None
            update = next((m for m in RELEASE if has(m)), None)
        if update is None:
            raise ValueError(
                f"{where}: no methods to drive it: a learner needs one of "
                f"{', '.join(SELECT[:6])}, … and one of {', '.join(UPDATE[:4])}, …; a stream "
                f"mechanism one of {', '.join(RELEASE)}; or name them with --methods "
                f"SELECT,UPDATE")
    up = _positional(getattr(cls, update))
    if select is None:
        if len(_required(up)) != 1:
            raise ValueError(f"{where}.{update} must take one argument (the round's input), "
                             f"it takes {len(_required(up))}")
        return Methods("stream", None, update, False, True)
    sel = _positional(getattr(cls, select))
    if len(_required(sel)) > 1:
        raise ValueError(f"{where}.{select} must take no argument (or the round's expert "
                         f"advice), it takes {len(_required(sel))}")
    need = len(_required(up))
    if need not in (1, 2) and not (need == 0 and len(up) >= 1):
        raise ValueError(f"{where}.{update} must take (arm, reward) for bandit feedback or "
                         f"(row) for full information, it takes {need} arguments")
    kind = "bandit" if len(up) >= 2 and need != 1 or need == 2 else "full"
    declared = feedback or getattr(cls, "feedback", None)
    if declared is not None and declared not in ("loss", "reward"):
        raise ValueError(f"{where}.feedback must be 'loss' or 'reward', got {declared!r}")
    if declared is None:
        last = (up[1] if kind == "bandit" else up[0]).name.lower()
        declared = "loss" if any(w in last for w in LOSS_WORDS) else "reward"
    return Methods(kind, select, update, len(_required(sel)) == 1, declared == "loss")


def _user_error(where: str, method: str, t: int, exc: Exception) -> UserCodeError:
    if isinstance(exc, UserCodeError):
        return exc
    return UserCodeError.raised(f"{where}.{method}", t + 1, exc)


def class_learner(cls, kwargs: dict, seed: Optional[str], seed_is_generator: bool,
                  methods: Methods, n_arms: int, loss_range: tuple, where: str,
                  form: Optional[StepForm] = None) -> Learner:
    """The learner running one ``cls(**kwargs)`` object per run (``seed``:
    the constructor's seed parameter, or None), driven by ``methods``.  A
    stream mechanism needs its ``form`` (``probe_stream``)."""
    lo, hi = float(loss_range[0]), float(loss_range[1])
    select, update = methods.select, methods.update
    name = getattr(cls, "__name__", where)

    def init(runs, rng):
        words = rng.integers(0, SEED_WORDS, size=runs, dtype=np.int64)
        seeds = rng.integers(0, 2 ** 32, size=runs, dtype=np.int64) if seed else None
        streams = Streams(words)
        objs = []
        with streams.active() as set_run:
            for i in range(runs):
                set_run(i)
                kw = dict(kwargs)
                if seed:
                    kw[seed] = rng if seed_is_generator else int(seeds[i])
                try:
                    objs.append(cls(**kw))
                except Exception as exc:  # noqa: BLE001 - the user's constructor
                    raise UserCodeError.raised(name, None, exc) from exc
        # Bound methods once: a lookup per call would cost more than the call.
        return {"objects": objs, "streams": streams, "t": 0, "n": runs,
                "select": [getattr(o, select) for o in objs] if select else None,
                "update": [getattr(o, update) for o in objs]}

    def act(state, advice, rng):
        t = state["t"]
        if methods.kind == "stream":
            return state, state["codes"]
        chooses = state["select"]
        local = capture.LOCAL       # through the module: a thread-local does not pickle
        with state["streams"].active():
            i, out = -1, []
            try:
                if methods.advice:
                    for i, f in enumerate(chooses):
                        local.run = i
                        out.append(f(np.array(advice, copy=True)))
                else:
                    for i, f in enumerate(chooses):
                        local.run = i
                        out.append(f())
            except Exception as exc:  # noqa: BLE001 - the user's method
                raise _user_error(name, select, t, exc) from exc
        try:
            arms = np.asarray(out)
            if arms.shape != (len(chooses),) or arms.dtype.kind not in "iu":
                bad = next((a for a in out if not isinstance(a, (int, np.integer))
                            or isinstance(a, bool)), out[0] if out else None)
                raise TypeError(f"got {bad!r}")
        except (TypeError, ValueError, OverflowError) as exc:
            raise UserCodeError(f"{name}.{select}", t + 1,
                                f"returned something that is not an arm index ({exc}); it "
                                f"must return an integer in [0, {n_arms})") from None
        return state, arms

    def feed(state, actions, losses, rng):
        objs, t = state["objects"], state["t"]
        learns = state["update"]
        local = capture.LOCAL
        with state["streams"].active():
            try:
                if methods.kind == "bandit":
                    fb = losses if methods.losses else hi + lo - np.asarray(losses, float)
                    for i, (f, a, r) in enumerate(zip(learns, actions.tolist(), fb.tolist())):
                        local.run = i
                        f(a, r)
                elif methods.kind == "full":
                    row = np.asarray(losses, dtype=float)
                    row = row if methods.losses else hi + lo - row
                    for i, f in enumerate(learns):
                        local.run = i
                        f(row.copy())
                else:
                    row = np.asarray(losses, dtype=float)
                    value = float(row[0]) if row.size == 1 else row
                    outs = []
                    for i, f in enumerate(learns):
                        local.run = i
                        outs.append(leaves(f(value if row.size == 1 else row.copy())))
                    if form is None:        # the probe: keep what was returned
                        state = {**state, "codes": np.zeros(len(objs), dtype=np.int16),
                                 "outputs": state.get("outputs", []) + outs}
                    else:
                        codes, nums = form.encode(outs)
                        state = {**state, "codes": codes, "numbers": nums}
            except UserCodeError:
                raise
            except Exception as exc:  # noqa: BLE001 - the user's method
                raise _user_error(name, update, t, exc) from exc
        return {**state, "t": t + 1}

    def one_run(losses, rng, run_seed):
        """One object driven over ``losses`` (T, K) on ``rng`` (its seed
        parameter gets ``rng`` or ``run_seed``), as ``init``/``act``/``feed``
        drive each: what it outputs, round by round (the arms it plays, or
        what it releases)."""
        kw = dict(kwargs)
        if seed:
            kw[seed] = rng if seed_is_generator else run_seed
        obj = cls(**kw)
        choose = getattr(obj, select) if select else None
        learn = getattr(obj, update)
        outs = []
        for row in np.asarray(losses, dtype=float):
            if methods.kind == "stream":
                outs.append(leaves(learn(float(row[0]) if row.size == 1 else row.copy())))
                continue
            arm = choose()
            outs.append(arm)
            if methods.kind == "bandit":
                loss = float(row[operator.index(arm)])
                learn(operator.index(arm), loss if methods.losses else hi + lo - loss)
            else:
                learn(row.copy() if methods.losses else hi + lo - row)
        return outs

    numbers = methods.kind == "stream" and form is not None and form.numbers
    codes = (form.n_codes if form is not None else 1) if methods.kind == "stream" else n_arms
    return Learner(init, act, feed, codes, feedback=methods.kind,
                   point=_numbers_of if numbers else None,
                   one_run=None if methods.advice else one_run)


def _numbers_of(state):
    """A stream mechanism's numbers of the round just answered."""
    return state["numbers"]


PROBE_RUNS = 16
PROBE_STREAM = 0x9B0BE


def probe_stream(cls, kwargs: dict, seed, seed_is_generator: bool, methods: Methods,
                 inputs: list, loss_range: tuple, where: str) -> StepForm:
    """The encoding of a stream mechanism's outputs, from ``PROBE_RUNS``
    runs on each of ``inputs`` ((T, K) arrays) with fixed streams."""
    learner = class_learner(cls, kwargs, seed, seed_is_generator, methods, 1, loss_range, where)
    values = []
    for k, x in enumerate(inputs):
        rng = np.random.default_rng([PROBE_STREAM, k])
        state = learner.init(PROBE_RUNS, rng)
        for row in x:
            state = learner.feed(state, None, row, rng)
        values += state.get("outputs", [])
    return step_form(values, f"{where}.{methods.update}")
