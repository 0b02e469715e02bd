"""The ``audit`` command line: its parser, ``list``, ``regret`` and ``main``
(the other commands are in ``audit.commands``).

Exit codes, one meaning each: 0 consistent (``check``: every
entry as expected), 1 violation (``check``: an expectation not met), 2 bad
input or usage, including a user's algorithm that breaks the interface or
raises (one line naming the flag, key or function), 3 an internal error of
the tool (one line naming a file that holds the traceback).  Never a
traceback on stderr.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        # "argument --seed: --seed must be ..." says the flag once.
        head, sep, rest = message.partition(": ")
        if sep and head.startswith("argument ") and rest.startswith(head[len("argument "):]):
            message = rest
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


def _nonnegative_int(name):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a non-negative integer, "
                                             f"got {text!r}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{name} must be a non-negative integer, got {value}")
        return value
    return parse


def _number(name, lo=None, hi=None, lo_open=True, hi_open=False):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number, got {text}")
        bad = ((lo is not None and (value <= lo if lo_open else value < lo))
               or (hi is not None and (value >= hi if hi_open else value > hi)))
        if bad:
            left = "(" if lo_open else "["
            right = ")" if hi_open or hi is None else "]"
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
    p.add_argument("--epsilon", type=_number("--epsilon", lo=0), metavar="E",
                   help="the ε the algorithm is built with (its claim follows from it); a "
                        "user factory f(T, K, N, epsilon, delta, **params) gets --epsilon, else "
                        "(audit run) --claim-epsilon, else its own default for epsilon; with "
                        "none of these it is an error")
    p.add_argument("--delta", type=_number("--delta", lo=0, hi=1, lo_open=False, hi_open=True),
                   metavar="D", help="the δ it is built with (a user factory gets --delta, else "
                                     "(audit run) --claim-delta, else its default, else 0)")
    p.add_argument("--horizon", type=_positive_int("--horizon"))
    p.add_argument("--arms", type=_positive_int("--arms"))
    p.add_argument("--experts", type=_positive_int("--experts"))
    p.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--seed", type=_nonnegative_int("--seed"), default=0)
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
    add_report_parsers(sub, _positive_int, _nonnegative_int)
    add_check_parser(sub, _positive_int, _number)
    add_history_parser(sub, _positive_int)
    return parser


def _build_algorithm(args):
    from algorithms import build
    return build(args.algorithm, horizon=args.horizon, arms=args.arms, experts=args.experts,
                 epsilon=args.epsilon, delta=args.delta, params=dict(args.param),
                 claim_epsilon=getattr(args, "claim_epsilon", None),
                 claim_delta=getattr(args, "claim_delta", None),
                 naming="cli" if args.command == "run" else "cli-regret")


def check_writable(path: str, flag: str, directory: bool = False) -> None:
    """Refuse an output location that cannot be written, before any work is
    done: ``path`` is a file (``--json``, ``--junit``) or, with ``directory``,
    a folder (``--report``) that may not exist yet (its parent must).  A
    temporary file is created and removed in the folder that will hold it."""
    import tempfile
    path = os.path.abspath(path)
    if directory:
        if os.path.exists(path) and not os.path.isdir(path):
            raise UsageError(f"{flag}: {path} exists and is not a directory")
        target = path if os.path.isdir(path) else os.path.dirname(path)
    else:
        if os.path.isdir(path):
            raise UsageError(f"{flag}: {path} is a directory; give a file path")
        target = os.path.dirname(path)
    if not os.path.isdir(target):
        raise UsageError(f"{flag}: directory {target} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".audit-write-test-", dir=target)
        os.close(fd)
        os.remove(tmp)
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write in {target} ({exc.strerror or exc})") from None


def write_json_atomic(path: str, doc: dict, flag: str = "--json") -> None:
    """Write to a temporary file and rename, so no half-written file is left."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"{flag}: directory {directory} does not exist")
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=2, default=float)
            fh.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise UsageError(f"{flag}: cannot write {path} ({exc.strerror or exc})") from None


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
    from .contract import check_interface
    from .instances import make_instance
    from .regret import estimate_regret
    if args.json:
        check_writable(args.json, "--json")
    alg = _build_algorithm(args)
    if alg.check_losses is None:  # estimate_regret refuses the others with one line
        inst = make_instance(args.instance, alg.horizon, alg.n_arms, alg.n_experts)
        check_interface(alg, inst.losses, inst.advice)
    result = estimate_regret(alg, runs=args.runs, instance=args.instance, seed=args.seed,
                             jobs=args.jobs)
    print(result)
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    return EXIT_OK


def one_line(text: str) -> str:
    """A message as one line (an exception's text may span several)."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def is_user_algorithm(name) -> bool:
    """A user's ``package.module:attribute`` rather than a registered name."""
    from algorithms import REGISTRY
    return isinstance(name, str) and name not in REGISTRY


def user_function_in_traceback(exc: BaseException, algo) -> "str | None":
    """The user's function an exception escaped from, when ``algo`` is a
    user's ``package.module:attribute`` and the innermost frame of the
    traceback outside this tool lies in that package (e.g. a ``rebuild`` or
    a ``check_losses`` hook that the engine calls directly); else None."""
    if not is_user_algorithm(algo):
        return None
    top = algo.partition(":")[0].split(".")[0]
    mod = sys.modules.get(top)
    roots = [os.path.abspath(p) for p in getattr(mod, "__path__", [])]
    if not roots and getattr(mod, "__file__", None):
        roots = [os.path.abspath(mod.__file__)]
    if not roots:
        return None
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ours = [os.path.join(here, d) + os.sep for d in ("audit", "algorithms", "attacks")]
    found, tb = None, exc.__traceback__
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if any(name == r or name.startswith(r + os.sep) for r in roots) and not any(
                name.startswith(o) for o in ours):
            found = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    return found


def write_traceback(exc: BaseException, argv=None) -> str:
    """The full traceback of ``exc`` in a new file; its path, or a note saying
    why none could be written."""
    import tempfile
    import traceback
    from . import __version__
    try:
        fd, path = tempfile.mkstemp(prefix="audit-traceback-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            fh.write(f"audit {__version__}, python {sys.version.split()[0]}\n")
            fh.write(f"command: audit {' '.join(sys.argv[1:] if argv is None else argv)}\n\n")
            traceback.print_exception(exc, file=fh)
        return f"traceback in {path}"
    except OSError as err:
        return f"no traceback file: {err}"


def internal_error_line(exc: BaseException, argv=None, what: str = "") -> str:
    """One line for an error of the tool itself, naming the traceback file."""
    return (f"{what or type(exc).__name__}: {one_line(exc)} "
            f"({write_traceback(exc, argv)}; please report it)")


def main(argv=None) -> int:
    from algorithms.errors import UserCodeError
    parser = build_parser()
    args = None
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
    except UserCodeError as exc:
        algo = getattr(args, "algorithm", None) if args is not None else None
        if args is not None and args.command in ("run", "regret") and is_user_algorithm(algo):
            print(f"audit: error: {algo}: your {one_line(exc)}", file=sys.stderr)
            return EXIT_USAGE
        # A built-in algorithm that raises is a bug of this tool.
        print(f"audit: internal error: "
              f"{internal_error_line(exc, argv, f'{algo} (built in)' if algo else '')}",
              file=sys.stderr)
        return EXIT_INTERNAL
    except (UsageError, ValueError) as exc:
        print(f"audit: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("audit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `audit history | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - anything else is a bug of this tool ...
        algo = getattr(args, "algorithm", None) if args is not None else None
        fn = user_function_in_traceback(exc, algo) if args is not None and args.command in (
            "run", "regret") else None
        if fn is not None:  # ... unless it escaped from the user's own code
            print(f"audit: error: {algo}: your {fn}() raised {type(exc).__name__}: "
                  f"{one_line(exc)}", file=sys.stderr)
            return EXIT_USAGE
        print(f"audit: internal error: {internal_error_line(exc, argv)}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
