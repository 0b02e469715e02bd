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
import textwrap

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
                   help="a registered name (see 'audit list') or package.module:attribute "
                        "(required)")
    p.add_argument("--epsilon", type=_number("--epsilon", lo=0), metavar="E",
                   help="the ε the algorithm is built with (its claim follows from it); a "
                        "user factory f(T, K, N, epsilon, delta, **params) gets --epsilon, else "
                        "(audit run) --claim-epsilon, else its own default for epsilon; with "
                        "none of these it is an error (default: the algorithm's own)")
    p.add_argument("--delta", type=_number("--delta", lo=0, hi=1, lo_open=False, hi_open=True),
                   metavar="D", help="the δ it is built with (a user factory gets --delta, else "
                                     "(audit run) --claim-delta, else its default, else 0) "
                                     "(default: the algorithm's own)")
    p.add_argument("--horizon", type=_positive_int("--horizon"), metavar="T",
                   help="number of rounds T (default: the algorithm's own; 1000 for a user "
                        "factory)")
    p.add_argument("--arms", type=_positive_int("--arms"), metavar="K",
                   help="number of arms K (default: the algorithm's own; 2 for a user factory)")
    p.add_argument("--experts", type=_positive_int("--experts"), metavar="N",
                   help="number of experts N, for algorithms that take expert advice "
                        "(default: the algorithm's own)")
    p.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                   help="another parameter of the algorithm (repeatable) (default: none)")
    p.add_argument("--seed", type=_nonnegative_int("--seed"), default=0,
                   help="seed of every random stream (default: %(default)s)")
    p.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes, -1 for one per CPU; results do not depend on it "
                        "(default: %(default)s, the number of CPUs)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the result document here (default: none)")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    parser = _Parser(prog="audit", description="Empirical privacy auditor for online-learning "
                                                "and bandit algorithms.")
    parser.add_argument("--version", action="version", version=f"audit {__version__}",
                        help="print the tool version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    lp = sub.add_parser("list", help="registered algorithms and attacks",
                        description="List the registered algorithms with their claims, default "
                                    "attacks and the white-box modes that apply; with "
                                    "--attacks, what each attack needs and which algorithms "
                                    "it applies to.")
    lp.add_argument("--attacks", action="store_true",
                    help="list the attacks instead (default: off)")

    r = sub.add_parser("regret", help="estimate expected regret on a named instance",
                       description="Estimate the expected regret of an algorithm on a named "
                                   "loss instance, by simulation.")
    _add_algorithm_options(r)
    r.add_argument("--runs", type=_positive_int("--runs"), default=1000,
                   help="independent runs to average over (default: %(default)s)")
    r.add_argument("--instance", default="gap",
                   help="the loss instance (default: %(default)s)")

    from .commands import (add_check_parser, add_history_parser, add_report_parsers,
                           add_run_parser, add_store_parser)
    add_run_parser(sub, _add_algorithm_options, _number, _positive_int)
    add_report_parsers(sub, _positive_int, _nonnegative_int)
    add_check_parser(sub, _positive_int, _number)
    add_history_parser(sub, _positive_int)
    add_store_parser(sub, _nonnegative_int)
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


def _table(rows, indent: str = "  ") -> list[str]:
    """Rows of strings as lines with every column as wide as its widest cell
    (the last column is not padded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [(indent + "  ".join([v.ljust(w) for v, w in zip(row, widths)] + [row[-1]])).rstrip()
            for row in rows]


def white_box_modes(alg) -> list[str]:
    """The white-box modes that apply to ``alg`` with its default attacks
    (``audit.whitebox.scope_of``: "actions" → per-round if an attack gives a
    history, search, pld; "transcript" → pld; else none)."""
    from .whitebox_run import applicable_modes
    found: list[str] = []
    for name in alg.default_attacks:
        attack = _attacks().get(name)
        try:
            scenarios = attack.scenarios(alg) if attack is not None else []
        except ValueError:
            continue
        for sc in scenarios:
            found += [m for m in applicable_modes(sc) if m not in found]
    from .whitebox_run import WHITE_MODES
    return [m for m in WHITE_MODES if m in found]


def _attacks():
    from attacks import ATTACKS
    return ATTACKS


def attack_applicability(attack, algorithms: dict) -> tuple[list[str], str]:
    """(names of the algorithms ``attack`` applies to, what it needs): it
    applies when ``attack.scenarios(alg)`` does not raise ValueError; what it
    needs is the first refusal, without the part naming the algorithm."""
    applies, need = [], ""
    for name, alg in algorithms.items():
        try:
            attack.scenarios(alg)
        except ValueError as exc:
            if not need:
                need = one_line(exc).split("; ")[0]
                for prefix in (f"attack {attack.name} ", "attack ", "needs "):
                    if need.startswith(prefix):
                        need = need[len(prefix):]
            continue
        applies.append(name)
    if len(applies) == len(algorithms):
        need = "nothing special: applies to every registered algorithm"
    return applies, need or "-"


def cmd_list(args) -> int:
    from algorithms import REGISTRY, build
    from .whitebox import scope_of
    ATTACKS = _attacks()
    algorithms = {name: build(name) for name in REGISTRY}
    if args.attacks:
        print("Attacks (what each needs, and the registered algorithms it applies to):")
        for name, attack in ATTACKS.items():
            applies, need = attack_applicability(attack, algorithms)
            wrap = textwrap.TextWrapper(width=100, initial_indent="    ",
                                        subsequent_indent="      ", break_on_hyphens=False)
            print(f"  {name}: {attack.summary}")
            print(wrap.fill(f"needs: {need}"))
            print(wrap.fill(f"applies to: {', '.join(applies) if applies else 'none registered'}"))
        return EXIT_OK
    rows = [("algorithm", "claim", "claim scope", "default attacks", "white-box modes", "summary")]
    sources = []
    for name, entry in REGISTRY.items():
        alg = algorithms[name]
        c = alg.claim
        eps = f"ε = {c.epsilon:g}" + (f", δ = {c.delta:g}" if c.delta else "")
        if c.per_round_epsilon is not None:
            eps += f" (ε_t = {c.per_round_epsilon:g} per round)"
        modes = white_box_modes(alg) if scope_of(alg) is not None else []
        rows.append((name, eps, c.scope, ", ".join(alg.default_attacks) or "-",
                     ", ".join(modes) or "-", entry.summary))
        sources.append(c.source)
    print("Algorithms (claim at the default parameters):")
    lines = _table(rows)
    width = max(len(r[0]) for r in rows)
    print(lines[0])
    for line, source in zip(lines[1:], sources):
        print(line)
        print(f"  {'':{width}s}  source: {source}")
    print("\nAttacks ('audit list --attacks' says what each needs and where it applies):")
    for line in _table([(name, attack.summary) for name, attack in ATTACKS.items()]):
        print(line)
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
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else EXIT_OK
        if args.command is None:
            raise UsageError("a command is required: list, run, check, history, regret, report, "
                             "gallery, store")
        from . import commands
        handler = {"list": cmd_list, "regret": cmd_regret, "run": commands.cmd_run,
                   "report": commands.cmd_report, "gallery": commands.cmd_gallery,
                   "check": commands.cmd_check, "history": commands.cmd_history,
                   "store": commands.cmd_store}[args.command]
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
