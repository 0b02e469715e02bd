"""The ``audit`` command line.  Exit codes: 0 consistent, 1 violation,
2 bad input or usage (one line on stderr, never a traceback)."""
from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise UsageError(message)


def _positive_int(name):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be >= 1, got {value}")
        return value
    return parse


def _number(name, lo=None, hi=None, lo_open=True, hi_open=False):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        bad = (value != value
               or (lo is not None and (value <= lo if lo_open else value < lo))
               or (hi is not None and (value >= hi if hi_open else value > hi)))
        if bad:
            left = "(" if lo_open else "["
            right = ")" if hi_open else "]"
            raise argparse.ArgumentTypeError(
                f"{name} must be in {left}{lo if lo is not None else '-inf'}, "
                f"{hi if hi is not None else 'inf'}{right}, got {text}")
        return value
    return parse


def _param(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--param must look like NAME=VALUE, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        # A word (e.g. domain=simplex): the factory validates it and names
        # what is allowed.
        return name, value
    return name, int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number


def _jobs(text):
    value = _positive_int("--jobs")(text) if text != "-1" else os.cpu_count() or 1
    return value


def _add_algorithm_options(p):
    p.add_argument("algorithm", metavar="ALGO",
                   help="a registered name (see 'audit list') or package.module:attribute")
    p.add_argument("--epsilon", type=_number("--epsilon", lo=0))
    p.add_argument("--delta", type=_number("--delta", lo=0, hi=1, lo_open=False, hi_open=True))
    p.add_argument("--horizon", type=_positive_int("--horizon"))
    p.add_argument("--arms", type=_positive_int("--arms"))
    p.add_argument("--experts", type=_positive_int("--experts"))
    p.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1)
    p.add_argument("--json", metavar="PATH")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="audit", description="Empirical privacy auditor for online-learning "
                                                "and bandit algorithms.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("list", help="registered algorithms and attacks")

    r = sub.add_parser("regret", help="estimate expected regret on a named instance")
    _add_algorithm_options(r)
    r.add_argument("--runs", type=_positive_int("--runs"), default=1000)
    r.add_argument("--instance", default="gap")

    from .commands import (add_check_parser, add_history_parser, add_report_parsers,
                           add_run_parser)
    add_run_parser(sub, _add_algorithm_options, _number, _positive_int)
    add_report_parsers(sub, _positive_int)
    add_check_parser(sub, _positive_int, _number)
    add_history_parser(sub, _positive_int)
    return parser


def _build_algorithm(args):
    from algorithms import build
    return build(args.algorithm, horizon=args.horizon, arms=args.arms, experts=args.experts,
                 epsilon=args.epsilon, delta=args.delta, params=dict(args.param))


def write_json_atomic(path: str, doc: dict) -> None:
    """Write to a temporary file and rename, so no half-written file is left."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"--json: directory {directory} does not exist")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=2, default=float)
        fh.write("\n")
    os.replace(tmp, path)


def cmd_list(args) -> int:
    from algorithms import REGISTRY, build
    from attacks import ATTACKS
    print("Algorithms (claim at the default parameters):")
    for name, entry in REGISTRY.items():
        alg = build(name)
        c = alg.claim
        eps = f"ε = {c.epsilon:g}" + (f", δ = {c.delta:g}" if c.delta else "")
        if c.per_round_epsilon is not None:
            eps += f" (ε_t = {c.per_round_epsilon:g} per round)"
        print(f"  {name:22s} {eps:38s} scope {c.scope:10s} {entry.summary}")
        print(f"  {'':22s} source: {c.source}")
    print("\nAttacks:")
    for name, attack in ATTACKS.items():
        print(f"  {name:12s} {attack.summary}")
    return EXIT_OK


def cmd_regret(args) -> int:
    from .regret import estimate_regret
    alg = _build_algorithm(args)
    result = estimate_regret(alg, runs=args.runs, instance=args.instance, seed=args.seed,
                             jobs=args.jobs)
    print(result)
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    return EXIT_OK


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required: list, run, check, history, regret, report, "
                             "gallery")
        from . import commands
        handler = {"list": cmd_list, "regret": cmd_regret, "run": commands.cmd_run,
                   "report": commands.cmd_report, "gallery": commands.cmd_gallery,
                   "check": commands.cmd_check, "history": commands.cmd_history}[args.command]
        return handler(args)
    except (UsageError, ValueError) as exc:
        print(f"audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("audit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `audit history | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
