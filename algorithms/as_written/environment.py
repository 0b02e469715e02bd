"""A learner that draws its own rewards, audited as written: the class plays
a round with one method (``run_round()``, ``step()``, ``play()``, …) and
inside it asks an *environment* for the reward of the arm it pulls — a
method of its own (``pull_arm(arm)``, ``get_reward(arm)``, …) or an object
its constructor takes (``env``, ``environment``, ``bandit``) whose method
it calls with the arm (``env.pull(arm)``, ``env.step(arm)``, ``env(arm)``).

The audit supplies that environment: the method is replaced on each object
(an attribute of the object shadows the class's), or the constructor gets
an object every method of which is the hook.  The hook returns the round's
reward of the arm (``hi + lo − loss``, or the loss itself where the class's
``feedback = "loss"`` or the hook's name says loss) and records the arm:
what the learner plays is what it asks the environment for, one arm a
round.  ``--environment NAME`` names the method or the constructor
parameter; without it, the first of ``HOOKS`` the class has, or of
``PARAMS`` its constructor takes, is used where the class has no update
method for the usual conventions.

The simulation drives it like a stream (each round reads its row, then
answers with the arm), so the pipeline needs nothing new.

May import: numpy, ``algorithms.core``, ``algorithms.errors``,
``algorithms.as_written``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.core import Learner
from algorithms.errors import UserCodeError
from . import capture
from .objects import build_objects, declared_feedback

HOOKS = ("pull_arm", "get_reward", "sample_reward", "draw_reward", "environment", "env_step",
         "get_loss", "sample_loss")
PARAMS = ("env", "environment", "bandit", "bandit_env")
DRIVERS = ("run_round", "play_round", "step", "play", "round", "run_one_round", "next_round",
           "iterate", "act", "pull", "run_step")


@dataclass(frozen=True)
class EnvMethods:
    """The method that plays a round and the environment's name: a method
    of the class (``param`` False) or a constructor parameter."""

    driver: str
    hook: str
    param: bool
    losses: bool

    def describe(self) -> str:
        where = f"constructor's {self.hook}" if self.param else f"{self.hook}(arm)"
        fb = "losses" if self.losses else "rewards (reward = hi + lo − loss)"
        return (f"{self.driver}() per round; the audit is the environment "
                f"({where}), the arm asked for is the arm played; feedback as {fb}")


def _required_positional(fn) -> int:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 0
    return sum(1 for p in params if p.name != "self" and p.default is inspect.Parameter.empty
               and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _ctor_params(cls) -> list:
    try:
        return list(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return []


def find_environment(cls, named: Optional[str], driver: Optional[str], where: str,
                     feedback: Optional[str]) -> Optional[EnvMethods]:
    """How ``cls`` is driven with the audit as its environment: ``named``
    (``--environment``), else a hook of ``HOOKS``/``PARAMS`` it has; None
    when it has neither.  ``driver``: the round's method (``--methods``),
    else the first of ``DRIVERS`` taking no argument."""
    params = _ctor_params(cls)
    if named is not None:
        if named in params:
            param = True
        elif callable(getattr(cls, named, None)):
            param = False
        else:
            raise ValueError(f"--environment {named}: {where} has no method or constructor "
                             f"parameter of that name")
        hook = named
    else:
        hook = next((h for h in HOOKS if callable(getattr(cls, h, None))
                     and _required_positional(getattr(cls, h)) == 1), None)
        param = False
        if hook is None:
            hook = next((p for p in PARAMS if p in params), None)
            param = True
        if hook is None:
            return None
    if driver is None:
        driver = next((d for d in DRIVERS if d != hook and callable(getattr(cls, d, None))
                       and _required_positional(getattr(cls, d)) == 0), None)
    if driver is None or not callable(getattr(cls, driver, None)):
        raise ValueError(f"{where}: it asks its environment ({hook}) for rewards, but has no "
                         f"method that plays a round without arguments (one of "
                         f"{', '.join(DRIVERS[:5])}, …); name it with --methods ROUND")
    if _required_positional(getattr(cls, driver)) != 0:
        raise ValueError(f"{where}.{driver} must play a round without arguments")
    declared = declared_feedback(cls, feedback, where)
    losses = declared == "loss" if declared else "loss" in hook.lower() or "cost" in hook.lower()
    return EnvMethods(driver, hook, param, losses)


class _Env:
    """The environment object a constructor receives: every method of it
    (``pull``, ``step``, ``sample``, …), and the object itself, is the hook."""

    def __init__(self, hook):
        self._hook = hook

    def __call__(self, arm, *args, **kwargs):
        return self._hook(arm)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._hook


class _Round:
    """One object's hook: the round's row, and the arms asked for."""

    __slots__ = ("row", "arms", "lo", "hi", "losses", "n_arms")

    def __init__(self, lo, hi, losses, n_arms):
        self.row, self.arms = None, []
        self.lo, self.hi, self.losses, self.n_arms = lo, hi, losses, n_arms

    def played(self, where: str, t: int) -> int:
        """The one arm asked for in round ``t`` (0-based); a clear error
        otherwise."""
        if len(self.arms) != 1:
            raise UserCodeError(where, t + 1, f"asked the environment for {len(self.arms)} "
                                f"arms in one round; a bandit learner pulls one arm a round")
        return self.arms[0]

    def __call__(self, arm, *args, **kwargs):
        a = int(arm)
        if not 0 <= a < self.n_arms or isinstance(arm, bool):
            raise ValueError(f"asked the environment for arm {arm!r}; arms are 0..{self.n_arms - 1}")
        self.arms.append(a)
        loss = float(self.row[a])
        return loss if self.losses else self.hi + self.lo - loss


def environment_learner(cls, kwargs: dict, seed: Optional[str], seed_is_generator: bool,
                        m: EnvMethods, n_arms: int, loss_range: tuple, where: str) -> Learner:
    """The learner running one ``cls(**kwargs)`` object per run, the audit
    its environment (module docstring): each round's code is the arm it
    asked for."""
    lo, hi = float(loss_range[0]), float(loss_range[1])
    name = getattr(cls, "__name__", where)

    def build(kw, hook):
        if m.param:
            kw[m.hook] = _Env(hook)
        obj = cls(**kw)
        if not m.param:
            setattr(obj, m.hook, hook)
        return obj

    def init(runs, rng):
        hooks = [_Round(lo, hi, m.losses, n_arms) for _ in range(runs)]
        objs, streams = build_objects(cls, lambda i, kw: build(kw, hooks[i]), kwargs, seed,
                                      seed_is_generator, runs, rng, name)
        return {"streams": streams, "t": 0, "hooks": hooks,
                "play": [getattr(o, m.driver) for o in objs],
                "codes": np.zeros(runs, dtype=np.int16)}

    def feed(state, actions, row, rng):
        t = state["t"]
        codes = np.empty(len(state["play"]), dtype=np.int16)
        local = capture.LOCAL
        with state["streams"].active():
            for i, (play, hook) in enumerate(zip(state["play"], state["hooks"])):
                local.run = i
                hook.row, hook.arms = row, []
                try:
                    play()
                except Exception as exc:  # noqa: BLE001 - the user's method
                    raise UserCodeError.raised(f"{name}.{m.driver}", t + 1, exc) from exc
                codes[i] = hook.played(f"{name}.{m.driver}", t)
        return {**state, "t": t + 1, "codes": codes}

    def act(state, advice, rng):
        return state, state["codes"]

    def one_run(losses, rng, run_seed):
        """One object over ``losses`` (T, K): the arm it asks for each round."""
        kw = dict(kwargs)
        if seed:
            kw[seed] = rng if seed_is_generator else run_seed
        hook = _Round(lo, hi, m.losses, n_arms)
        obj = build(kw, hook)
        play = getattr(obj, m.driver)
        outs = []
        for row in np.asarray(losses, dtype=float):
            hook.row, hook.arms = row, []
            play()
            outs.append(hook.played(f"{name}.{m.driver}", len(outs)))
        return outs

    return Learner(init, act, feed, n_arms, feedback="stream", one_run=one_run)
