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
  ``query``, ``step``, ``randomise``, ``privatise``, ``perturb``, …;
  failing those, a class's one method of one input named like an update
  or ``add``, ``feed``, ``__call__``: a counter's ``update(x)`` returning
  the noisy count).  Whatever it returns is observed
  (``algorithms.as_written.outputs``).
* a **fused** bandit has one method ``step(last_reward, last_arm) -> arm``
  (or ``act``, ``play``, ``pull``, … with two parameters named like
  feedback and like an arm, in either order): it gets the last round's
  feedback and returns the next arm; its first call gets no arguments
  when both have defaults, else ``(None, None)``.
* a method whose first parameter is named ``t`` (``round``, ``time``,
  ``timestep``, …) gets the round's index, 0, 1, …, before the rest:
  ``predict(t)`` then ``observe_loss(t, loss_vector)``; an update that
  then takes one value named like one number (``loss``, ``reward``,
  ``value``, …) is a bandit's, the played arm's feedback.
* ``update(reward)`` is a bandit's (the played arm's reward); so is
  ``update(loss)`` (``cost``, ``value``) reading an attribute in which the
  choosing method kept the arm it returned; any other ``update(loss)`` gets
  the round's row, or the played arm's value where the code fails on one.

Feedback is losses or rewards: the class attribute ``feedback = "loss"``
or ``"reward"`` decides, else the name of the update method's last
parameter (``loss``/``cost`` → losses; ``reward`` → rewards), else the
update method's name (``observe_loss``), else rewards.  A reward is
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

import ast
import dataclasses
import inspect
import operator
import textwrap
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.core import Learner
from algorithms.errors import UserCodeError
from . import capture
from .capture import Streams
from .outputs import StepForm, leaves, step_form
from .whole import WHOLE_RUNS, WHOLE_STREAM, rounded, whole_number_code

SELECT = ("select_arm", "choose_arm", "select_action", "choose_action", "get_action", "get_arm",
          "select", "choose", "pull", "act", "play", "next_arm", "predict", "recommend")
UPDATE = ("update", "observe", "feedback", "receive_reward", "give_feedback", "give_reward",
          "receive_feedback", "record_reward", "add_reward", "update_arm",
          "learn", "reward", "observe_loss", "observe_reward", "receive_loss", "update_loss",
          "update_reward")
RELEASE = ("release", "answer", "respond", "process", "query", "step", "randomise", "randomize",
           "privatise", "privatize", "perturb", "sanitise", "sanitize")
# A class with none of the above but one method taking one input is a
# stream mechanism through it: a counter's ``update(x)`` or ``add(x)``
# returning the noisy count, as continual-release code is written.
STREAM_FALLBACK = UPDATE + ("add", "feed", "push", "insert", "increment", "__call__")
LOSS_WORDS = ("loss", "cost")
# A method's first parameter with one of these names receives the round's
# index, 0, 1, … (``predict(t)``, ``observe_loss(t, value)``).
ROUND_NAMES = ("t", "round", "rnd", "time", "timestep", "time_step", "round_index", "iteration",
               "step_index", "round_number")
# A fused method ``step(last_reward, last_arm) -> arm``: its two parameters
# named like feedback and like an arm.
FEEDBACK_WORDS = ("reward", "loss", "cost", "feedback", "payoff", "gain")
ARM_WORDS = ("arm", "action", "choice", "played", "pulled", "chosen")
FUSED = ("step",) + SELECT
# One value given to an update method is the played arm's feedback when the
# parameter is named like one number; else it is the round's whole row.
SCALAR_NAMES = ("reward", "loss", "cost", "value", "r", "payoff", "feedback", "gain", "y")
# A one-value update so named is a bandit's (the played arm's reward): a
# full-information learner names a row in the plural (``rewards``).
ONE_REWARD_NAMES = ("reward", "r", "payoff", "gain", "feedback")
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
    fused: Optional[str] = None     # "feedback-first"/"arm-first": step(r, a) -> next arm
    fused_empty: bool = False       # the fused method's first call takes no arguments
    select_round: bool = False      # select(t, …): the round's index first
    update_round: bool = False      # update(t, …)
    update_arm: bool = True         # a bandit update receives the arm (else the value only)
    scalar_fallback: bool = False   # update(loss): a row, or the played arm's value if that fails
    # A stream's values as whole numbers or truth values ("int", "bool"):
    # rounded before the code sees them (``algorithms.as_written.whole``).
    whole: Optional[str] = None

    def describe(self) -> str:
        fb = "losses" if self.losses else "rewards (reward = hi + lo − loss)"
        if self.fused:
            args = "feedback, arm" if self.fused == "feedback-first" else "arm, feedback"
            first = "()" if self.fused_empty else "(None, None)"
            return (f"{self.select}({args}) -> next arm, the last round's feedback in, "
                    f"{self.select}{first} first; feedback as {fb}")
        t = "t, " if self.update_round else ""
        if self.kind == "stream":
            return f"{self.update}({t}value) per round"
        arg = ", ".join((["t"] if self.select_round else []) + (["advice"] if self.advice
                                                                 else []))
        row = ("row" if self.kind == "full" else "arm, feedback" if self.update_arm
               else "feedback")
        return f"{self.select}({arg}) then {self.update}({t}{row}); feedback as {fb}"


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


def _defines(cls, name: str) -> bool:
    """Whether ``cls`` (or a base of its own, not ``object``) defines the
    method ``name``: every class is callable, not every one has ``__call__``."""
    return any(callable(vars(c).get(name)) for c in cls.__mro__ if c is not object)


def _required(params) -> list:
    return [p for p in params if p.default is inspect.Parameter.empty]


def _takes_round(params) -> bool:
    return bool(params) and params[0].name.lower() in ROUND_NAMES


def _fused(cls, name: str) -> Optional[tuple]:
    """(order, first call empty) when ``cls.name`` reads like ``step(last_reward,
    last_arm) -> arm``: two parameters, one named like feedback, one like
    an arm."""
    fn = getattr(cls, name, None)
    params = _positional(fn) if callable(fn) else []
    if len(params) != 2:
        return None
    names = [p.name.lower() for p in params]
    fb = [any(w in n for w in FEEDBACK_WORDS) for n in names]
    arm = [any(w in n for w in ARM_WORDS) for n in names]
    if fb == [True, False] and arm == [False, True]:
        order = "feedback-first"
    elif fb == [False, True] and arm == [True, False]:
        order = "arm-first"
    else:
        return None
    return order, not _required(params)


def declared_feedback(cls, feedback: Optional[str], where: str) -> Optional[str]:
    """'loss' or 'reward': the flag, else the class's ``feedback`` attribute
    (a method so named, ``feedback(arm, reward)``, declares nothing); None
    where neither says."""
    declared = feedback or getattr(cls, "feedback", None)
    if callable(declared):
        return None
    if declared is not None and declared not in ("loss", "reward"):
        raise ValueError(f"{where}.feedback must be 'loss' or 'reward', got {declared!r}")
    return declared


def _feedback_kind(cls, update: str, feedback: Optional[str], where: str, last: str) -> bool:
    """Whether feedback is losses: ``feedback`` (the flag), else the class's
    attribute, else the parameter's name."""
    declared = declared_feedback(cls, feedback, where)
    if declared is None:        # the parameter's name, else the method's (observe_loss)
        for word in (last.lower(), update.lower()):
            if any(w in word for w in LOSS_WORDS):
                return True
            if "reward" in word:
                return False
        declared = "reward"
    return declared == "loss"


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
        if select is None and _fused(cls, update):
            return _fused_methods(cls, update, feedback, where)
    else:
        select = next((m for m in SELECT if has(m)), None)
        update = next((m for m in UPDATE if has(m)), None)
        if select is None or update is None:
            fused = next((m for m in FUSED if has(m) and _fused(cls, m)), None)
            if fused:
                return _fused_methods(cls, fused, feedback, where)
            select = None
            update = next((m for m in RELEASE if has(m)), None) or next(
                (m for m in STREAM_FALLBACK if _defines(cls, m)
                 and len(_required(_positional(getattr(cls, m)))) == 1), None)
        if update is None:
            raise ValueError(
                f"{where}: no methods to drive it: a learner needs one of "
                f"{', '.join(SELECT[:6])}, … and one of {', '.join(UPDATE[:4])}, …; a stream "
                f"mechanism one of {', '.join(RELEASE)} (or one method taking one input: "
                f"update, add, …); or name them with --methods "
                f"SELECT,UPDATE")
    up = _positional(getattr(cls, update))
    update_round = len(up) >= 2 and _takes_round(up)
    if update_round:
        up = up[1:]
    if select is None:
        if len(_required(up)) != 1:
            raise ValueError(f"{where}.{update} must take one argument (the round's input), "
                             f"it takes {len(_required(up))}")
        return Methods("stream", None, update, False, True, update_round=update_round)
    sel = _positional(getattr(cls, select))
    select_round = _takes_round(sel)
    if select_round:
        sel = sel[1:]
    if len(_required(sel)) > 1:
        raise ValueError(f"{where}.{select} must take no argument (or the round's expert "
                         f"advice), it takes {len(_required(sel))}")
    need = len(_required(up))
    if need not in (1, 2) and not (need == 0 and len(up) >= 1):
        raise ValueError(f"{where}.{update} must take (arm, reward) for bandit feedback or "
                         f"(row) for full information, it takes {need} arguments")
    kind = "bandit" if len(up) >= 2 and need != 1 or need == 2 else "full"
    # observe_loss(t, loss): one number, the played arm's feedback (the
    # learner knows its arm); a row is named otherwise (losses, row, …).
    # update(reward) likewise, for a learner that remembers its arm; a
    # single loss, cost or value may be a row too (Hedge's update(loss)):
    # ``as_written`` tries the row and falls back to the played arm's value
    # where the code fails on a row (``scalar_fallback``).
    update_arm, fallback = True, False
    one = up[0].name.lower() if kind == "full" else ""      # "" is in neither list
    if update_round and one in SCALAR_NAMES or one in ONE_REWARD_NAMES:
        kind, update_arm = "bandit", False
    elif one in SCALAR_NAMES and remembers_arm(cls, select, update):
        # update(loss) reading the arm its choosing method kept: a bandit's
        # update, fed the played arm's loss (a row it might silently
        # accept would show it losses it never sees).
        kind, update_arm = "bandit", False
    elif one in SCALAR_NAMES:
        fallback = True
    last = (up[1] if kind == "bandit" and update_arm else up[0]).name
    losses = _feedback_kind(cls, update, feedback, where, last)
    return Methods(kind, select, update, len(_required(sel)) == 1, losses,
                   select_round=select_round, update_round=update_round, update_arm=update_arm,
                   scalar_fallback=fallback)


def _method_tree(cls, name: str):
    """The parsed source of ``cls``'s method ``name``, or None."""
    try:
        source = textwrap.dedent(inspect.getsource(getattr(cls, name)))
        return ast.parse(source)
    except (OSError, TypeError, SyntaxError, ValueError):
        return None


def _self_attribute(node) -> Optional[str]:
    """X where ``node`` is ``self.X``, else None."""
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "self"):
        return node.attr
    return None


def _self_reads(tree) -> set:
    """The ``self.X`` attributes a method's tree reads."""
    return {n.attr for n in ast.walk(tree)
            if _self_attribute(n) and isinstance(n.ctx, ast.Load)}


def remembers_arm(cls, select: str, update: str) -> bool:
    """Whether ``select`` keeps the arm it returns in an attribute
    (``self.last = arm; return arm``, ``self.arm = …; return self.arm``)
    that ``update`` reads: a bandit updating the arm it played."""
    chooser, learner = _method_tree(cls, select), _method_tree(cls, update)
    if chooser is None or learner is None:
        return False
    returned = [n.value for n in ast.walk(chooser) if isinstance(n, ast.Return) and n.value]
    names = {ast.unparse(_unwrapped(v)) for v in returned}
    kept = set()
    for n in ast.walk(chooser):
        # self.played.append(arm)
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == "append" and len(n.args) == 1
                and ast.unparse(_unwrapped(n.args[0])) in names
                and _self_attribute(n.func.value)):
            kept.add(_self_attribute(n.func.value))
        if isinstance(n, ast.Assign):
            value = ast.unparse(_unwrapped(n.value))
            for target in n.targets:
                for t in ast.walk(target):
                    attr = _self_attribute(t)
                    if attr and (value in names or f"self.{attr}" in names):
                        kept.add(attr)
    return bool(kept & _self_reads(learner))


def _unwrapped(node):
    """``int(x)``, ``np.int64(x)`` and ``x.item()`` are ``x``."""
    while True:
        if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
                and ast.unparse(node.func) in ("int", "np.int64", "numpy.int64", "np.intp")):
            node = node.args[0]
        elif (isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute)
              and node.func.attr == "item"):
            node = node.func.value
        else:
            return node


def _fused_methods(cls, name: str, feedback: Optional[str], where: str) -> Methods:
    order, empty = _fused(cls, name)
    params = _positional(getattr(cls, name))
    last = params[0 if order == "feedback-first" else 1].name
    return Methods("bandit", name, None, False, _feedback_kind(cls, name, feedback, where, last),
                   fused=order, fused_empty=empty)


def drivers(obj, m: Methods):
    """(choose, learn) of one object: its own methods, or adapters giving
    them the calls ``act``/``feed`` make — ``choose(*advice)`` returns the
    arm, ``learn(arm, feedback)`` or ``learn(row)`` takes the round's
    feedback (a fused ``step(r, a) -> arm`` gets it at the next round's
    call; a method taking the round's index gets it first)."""
    if m.fused:
        step = getattr(obj, m.select)
        last = []

        def choose(*advice):
            if not last:
                return step() if m.fused_empty else step(None, None)
            return step(*last[-1])

        def learn(arm, fb):
            last[:] = [(fb, arm) if m.fused == "feedback-first" else (arm, fb)]
        return choose, learn
    choose = getattr(obj, m.select) if m.select else None
    learn = getattr(obj, m.update)
    if not (m.select_round or m.update_round or not m.update_arm):
        return choose, learn
    clock = [0]
    raw_choose, raw_learn = choose, learn
    if m.select_round:
        def choose(*advice):
            return raw_choose(clock[0], *advice)

    def learn(*args):
        if not m.update_arm:
            args = args[1:]         # the learner knows its arm
        if m.update_round:
            out = raw_learn(clock[0], *args)
        else:
            out = raw_learn(*args)
        clock[0] += 1
        return out
    return choose, learn


def build_objects(cls, make, kwargs: dict, seed: Optional[str], seed_is_generator: bool,
                  runs: int, rng, name: str) -> tuple:
    """(objects, streams): ``make(i, kw)`` for each of ``runs`` runs of
    ``cls``, with the constructor's keywords ``kw`` (its seed parameter, if
    any, set for the run) and the run's random streams routed
    (``capture``)."""
    words = rng.integers(0, SEED_WORDS, size=runs, dtype=np.int64)
    seeds = rng.integers(0, 2 ** 32, size=runs, dtype=np.int64) if seed else None
    streams = Streams(words, code=cls)
    objs = []
    with streams.active() as set_run:
        for i in range(runs):
            set_run(i)
            kw = dict(kwargs)
            if seed:
                kw[seed] = rng if seed_is_generator else int(seeds[i])
            try:
                objs.append(make(i, kw))
            except Exception as exc:  # noqa: BLE001 - the user's constructor
                raise UserCodeError.raised(name, None, exc) from exc
    return objs, streams


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
    select, update = methods.select, methods.update or methods.select
    name = getattr(cls, "__name__", where)

    def init(runs, rng):
        objs, streams = build_objects(cls, lambda i, kw: cls(**kw), kwargs, seed,
                                      seed_is_generator, runs, rng, name)
        # Bound methods (or their adapters) once: a lookup per call would
        # cost more than the call.
        pairs = [drivers(o, methods) for o in objs]
        return {"objects": objs, "streams": streams, "t": 0, "n": runs,
                "select": [c for c, _ in pairs] if select else None,
                "update": [u for _, u in pairs]}

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
                    row = rounded(np.asarray(losses, dtype=float), methods.whole)
                    value = row.flat[0].item() if row.size == 1 else row
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
        choose, learn = drivers(obj, methods)
        outs = []
        for row in np.asarray(losses, dtype=float):
            if methods.kind == "stream":
                value = rounded(row.copy(), methods.whole)
                outs.append(leaves(learn(value.flat[0].item() if row.size == 1 else value)))
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


def whole_stream(cls, kwargs: dict, seed, seed_is_generator: bool, methods: Methods, T: int,
                 lo: float, hi: float, where: str) -> Optional[str]:
    """Why a stream class is code for whole-number values, or None
    (``whole.whole_number_code``, ``WHOLE_RUNS`` runs of each input)."""
    as_ints = dataclasses.replace(methods, whole="int")
    rng = np.random.default_rng(WHOLE_STREAM)

    def outputs(x, ints):
        learner = class_learner(cls, kwargs, seed, seed_is_generator,
                                as_ints if ints else methods, 1, (lo, hi), where)
        state = learner.init(WHOLE_RUNS, rng)
        for row in x:
            state = learner.feed(state, None, row, rng)
        return state.get("outputs", [])
    return whole_number_code(outputs, T, 1, lo, hi, rng)


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
