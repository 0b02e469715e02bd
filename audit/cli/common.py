"""What every ``audit`` command shares: exit codes, one-line errors, the
argument types that name their flag in errors, the algorithm options and
how they build an algorithm, output checks and atomic JSON, the executor
options (local processes or Dask, with or without the store) and the
store's automatic retention.

Exit codes, one meaning each: 0 consistent (``check``: every entry as
expected), 1 violation (``check``: an expectation not met), 2 bad input or
usage, including a user's algorithm that breaks the interface or raises (one
line naming the flag, key or function), 3 an internal error of the tool (one
line naming a file that holds the traceback), 130 interrupted (Ctrl-C,
SIGINT), 143 terminated (SIGTERM).  Never a traceback on stderr.

May import: ``algorithms``, ``audit.execution``, ``audit.jsondoc``.
"""
from __future__ import annotations

import argparse
import math
import os
import sys

from audit import jsondoc

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_SIGINT, EXIT_SIGTERM = 130, 143   # 128 + the signal's number, as a shell reports it


class UsageError(Exception):
    """Bad input: printed as one line, exit code 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by ``main``'s handler in the main thread.  A
    ``KeyboardInterrupt``, so everything that cleans up after Ctrl-C runs
    the same way (the local worker pool is aborted, completed chunks stay in
    the store); only the exit code differs."""

    exit_code = EXIT_SIGTERM


def interrupt_exit_code(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM (``Terminated``)."""
    return getattr(exc, "exit_code", EXIT_SIGINT)


def note_kept_chunks(exc: KeyboardInterrupt, store) -> None:
    """Record on an interrupt where its completed chunks are kept, for the
    one line ``main`` prints (None: nothing is kept)."""
    if store is not None:
        exc.kept_in = store.path


def interrupted_line(exc: KeyboardInterrupt) -> str:
    """The one line an interrupted command prints on stderr: which signal,
    and where the completed chunks are kept when a store keeps them."""
    line = "audit: interrupted" + (" (SIGTERM)" if isinstance(exc, Terminated) else "")
    kept = getattr(exc, "kept_in", None)
    if kept is not None:
        line += f"; completed chunks are kept in {kept}: rerun the same command to resume"
    return line


# Seconds a SIGTERM may wait for the main thread to return to Python (an
# algorithm's code inside a long C call — a solver, a big linear-algebra
# call — runs no Python signal handler until it returns) before the command
# stops without its clean-up.
TERM_GRACE = 5.0


class sigterm_interrupts:
    """``with sigterm_interrupts():`` — SIGTERM raises ``Terminated`` in the
    main thread, so a terminated command cleans up as after Ctrl-C.  The
    first SIGTERM does; later ones are ignored while it cleans up.  The
    previous handler is restored on the way out.  Outside the main thread,
    where no handler can be set, nothing changes.

    Python runs a signal handler only between bytecodes: code stuck in one
    long C call would ignore SIGTERM until the call returns.  So a watcher
    thread hears every signal too (``signal.set_wakeup_fd``, written by the
    C-level handler whatever the main thread is doing); where the handler has
    not run ``TERM_GRACE`` seconds after a SIGTERM, it prints the
    interruption line and ends the process with 143 at once.  Completed
    chunks are each committed to the store as they finish, so they are kept
    either way."""

    def __enter__(self):
        import signal
        import threading
        self.previous = None
        self._wakeup = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._handle)
            self._watch()
        return self

    def _watch(self):
        import signal
        import socket
        import threading
        handled = threading.Event()
        self._handled = handled
        try:
            ours, theirs = socket.socketpair()
            theirs.setblocking(False)
            old = signal.set_wakeup_fd(theirs.fileno(), warn_on_full_buffer=False)
        except (OSError, ValueError):   # no wakeup fd here: the handler alone
            return
        self._wakeup = (ours, theirs, old)

        def watch():
            while True:
                try:
                    data = ours.recv(64)
                except OSError:
                    return
                if not data:
                    return
                if signal.SIGTERM in data and not handled.wait(TERM_GRACE):
                    sys.stderr.write("audit: interrupted (SIGTERM); the algorithm's code did "
                                     f"not return to Python within {TERM_GRACE:g} s: stopped "
                                     "without clean-up (completed chunks stay in the store)\n")
                    sys.stderr.flush()
                    os._exit(EXIT_SIGTERM)
        threading.Thread(target=watch, name="audit-sigterm", daemon=True).start()

    def _handle(self, signum, frame):
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        handled = getattr(self, "_handled", None)
        if handled is not None:
            handled.set()
        raise Terminated()

    def __exit__(self, *exc):
        import signal
        if self._wakeup is not None:
            ours, theirs, old = self._wakeup
            try:
                signal.set_wakeup_fd(old)
            except (OSError, ValueError):
                pass
            theirs.close()
            ours.close()
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
        return False


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        # "argument --seed: --seed must be ..." says the flag once.
        head, sep, rest = message.partition(": ")
        if sep and head.startswith("argument ") and rest.startswith(head[len("argument "):]):
            message = rest
        raise UsageError(message)


def positive_int(name):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be >= 1, got {value}")
        return value
    return parse


def nonnegative_int(name):
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


def number(name, lo=None, hi=None, lo_open=True, hi_open=False):
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


def input_range(text):
    """``--input-range LO,HI``: two finite numbers, LO < HI."""
    lo, sep, hi = text.partition(",")
    try:
        lo, hi = float(lo), float(hi)
    except ValueError:
        lo = hi = None
    if not sep or lo is None or not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise argparse.ArgumentTypeError(f"--input-range must be LO,HI with finite numbers "
                                         f"LO < HI, got {text!r}")
    return lo, hi


def _jobs(text):
    value = positive_int("--jobs")(text) if text != "-1" else os.cpu_count() or 1
    return value


def add_algorithm_options(p):
    """ALGO, the flags that build it, and ``--seed``, ``--jobs``, ``--json``."""
    add_build_options(p)
    p.add_argument("--seed", type=nonnegative_int("--seed"), default=0,
                   help="seed of every random stream (default: %(default)s)")
    p.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes, -1 for one per CPU; results do not depend on it "
                        "(default: %(default)s, the number of CPUs)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the result document here (default: none)")


def add_build_options(p, optional: bool = False):
    """ALGO and the flags that build it (``--epsilon``, ``--delta``,
    ``--horizon``, ``--arms``, ``--experts``, ``--param``); ``optional``:
    ALGO may be left out (``audit list``)."""
    if optional:
        p.add_argument("algorithm", metavar="ALGO", nargs="?",
                       help="a registered name or package.module:attribute: say what applies "
                            "to it (default: list every registered algorithm)")
    else:
        p.add_argument("algorithm", metavar="ALGO",
                       help="a registered name (see 'audit list') or package.module:attribute "
                            "(required)")
    p.add_argument("--epsilon", type=number("--epsilon", lo=0), metavar="E",
                   help="the ε the algorithm is built with (its claim follows from it); a "
                        "user factory f(T, K, N, epsilon, delta, **params) gets --epsilon, else "
                        "(audit run) --claim-epsilon, else its own default for epsilon; with "
                        "none of these it is an error (default: the algorithm's own)")
    p.add_argument("--delta", type=number("--delta", lo=0, hi=1, lo_open=False, hi_open=True),
                   metavar="D", help="the δ it is built with (a user factory gets --delta, else "
                                     "(audit run) --claim-delta, else its default, else 0) "
                                     "(default: the algorithm's own)")
    p.add_argument("--horizon", type=positive_int("--horizon"), metavar="T",
                   help="number of rounds T (default: the algorithm's own; 1000 for a user "
                        "factory)")
    p.add_argument("--arms", type=positive_int("--arms"), metavar="K",
                   help="number of arms K (default: the algorithm's own; 2 for a user factory)")
    p.add_argument("--experts", type=positive_int("--experts"), metavar="N",
                   help="number of experts N, for algorithms that take expert advice "
                        "(default: the algorithm's own)")
    p.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                   help="another parameter of the algorithm (repeatable) (default: none)")
    p.add_argument("--methods", metavar="SELECT,UPDATE",
                   help="for a class audited as written: the methods that choose and learn "
                        "(e.g. select_arm,update), or a stream mechanism's one method "
                        "(default: found among the documented conventions)")
    p.add_argument("--feedback", choices=("loss", "reward"),
                   help="for a class audited as written: whether its update method receives "
                        "losses or rewards (reward = hi + lo − loss) (default: its 'feedback' "
                        "attribute, else the parameter's name, else reward)")
    p.add_argument("--environment", metavar="NAME",
                   help="for a class audited as written that draws its own rewards: the "
                        "method it asks for an arm's reward (pull_arm(arm)), or the "
                        "constructor parameter that receives the environment; the audit "
                        "supplies the rewards (default: one of the documented hook names, "
                        "where the class has no update method)")
    p.add_argument("--input-range", type=input_range, metavar="LO,HI",
                   help="for code audited as written: the range of each input value (loss, "
                        "reward or answer) (default: its loss_range, reward_range or "
                        "input_range attribute, else 0,1; a negative LO is written "
                        "--input-range=-1,1)")
    p.add_argument("--relation", choices=("one-round", "bounded-all"),
                   help="for code audited as written: which inputs are neighbours — "
                        "one-round (one round's answers change) or bounded-all (every answer "
                        "may change by at most --max-change, the relation of sparse vectors "
                        "and noisy max) (default: its relation attribute, else one-round)")
    p.add_argument("--max-change", type=number("--max-change", lo=0), metavar="D",
                   help="for code audited as written: the most one value changes between "
                        "neighbours (default: its max_change attribute; needed with "
                        "--relation bounded-all)")


def build_algorithm(args):
    """The algorithm the flags name.  Code that declares no claim of its own
    built under a curve claim (``--claim-mu``/``--claim-rho``, which replaces
    whatever claim the build carries) gets a stand-in ε for the claim — only
    where the code takes no ε it would be built with (else it asks for
    ``--epsilon``)."""
    from algorithms import build
    from algorithms.errors import NoClaim
    curve = getattr(args, "claim_mu", None) is not None or \
        getattr(args, "claim_rho", None) is not None
    try:
        return _build(args, build, getattr(args, "claim_epsilon", None))
    except NoClaim:
        if not (curve and getattr(args, "claim_epsilon", None) is None):
            raise
        alg = _build(args, build, 1.0)
        if "epsilon" in (alg.params or {}):
            raise ValueError(f"{args.algorithm} takes an ε it is built with and states no claim: "
                             f"pass --epsilon E to build it (the curve claim judges it)") from None
        return alg


def _build(args, build, claim_epsilon):
    return build(args.algorithm, horizon=args.horizon, arms=args.arms, experts=args.experts,
                 epsilon=args.epsilon, delta=args.delta, params=dict(args.param),
                 claim_epsilon=claim_epsilon,
                 claim_delta=getattr(args, "claim_delta", None),
                 naming="cli" if args.command == "run" else "cli-regret",
                 methods=getattr(args, "methods", None), feedback=getattr(args, "feedback", None),
                 input_range=getattr(args, "input_range", None),
                 environment=getattr(args, "environment", None),
                 relation=getattr(args, "relation", None),
                 max_change=getattr(args, "max_change", None))


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
            # One convention for non-finite numbers, strict JSON (audit.jsondoc).
            fh.write(jsondoc.dumps(doc, indent=2) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise UsageError(f"{flag}: cannot write {path} ({exc.strerror or exc})") from None


def table_lines(rows, indent: str = "  ") -> list[str]:
    """Rows of strings as lines with every column as wide as its widest cell
    (the last column is not padded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [(indent + "  ".join([v.ljust(w) for v, w in zip(row, widths)] + [row[-1]])).rstrip()
            for row in rows]


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
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
    from audit import __version__
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


def add_execution_options(p):
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the chunks on this Dask scheduler; needs the [dask] extra "
                        "(default: $AUDIT_SCHEDULER, else local processes)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--store", metavar="PATH",
                   help="keep completed chunks and the history here; afterwards the store is "
                        "pruned to the newest $AUDIT_STORE_KEEP fingerprints per audit (3 "
                        "unless set; 0 = never) (default: $AUDIT_STORE, else "
                        "$XDG_CACHE_HOME/privacy-audit/store.sqlite)")
    g.add_argument("--no-store", action="store_true",
                   help="keep nothing: no resume, no history (default: off)")


def open_store(args, readonly: bool = False):
    """The store the arguments ask for, or None for --no-store.  A store named
    by --store or $AUDIT_STORE must work (else exit 2); the default one in the
    cache directory is skipped with a warning when it cannot be used."""
    import os
    import sys
    from audit.execution.store import STORE_ENV, Store, StoreError, default_path
    if getattr(args, "no_store", False):
        return None
    path = args.store or default_path()
    if args.store or os.environ.get(STORE_ENV):
        return Store(path, readonly=readonly)
    try:
        return Store(path, create_dirs=True, readonly=readonly)
    except (StoreError, OSError) as exc:
        print(f"audit: warning: cannot use the store {path} ({exc}); running without it "
              f"(no resume, no history)", file=sys.stderr)
        return None


class execution:
    """``with execution(args, jobs) as ex:`` — the executor the arguments ask
    for (local processes or a Dask cluster, with or without a store); closes
    the client and the store on the way out."""

    def __init__(self, args, jobs: int):
        import os
        self.args, self.jobs = args, jobs
        self.address = args.scheduler or os.environ.get("AUDIT_SCHEDULER") or None

    def __enter__(self):
        from audit.execution.executor import Executor
        self.store = open_store(self.args)
        self.client = None
        try:
            if self.address:
                from audit.execution.cluster import connect
                self.client = connect(self.address)
        except BaseException:
            if self.store is not None:
                self.store.close()
            raise
        return Executor(jobs=self.jobs, client=self.client, store=self.store)

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        if self.store is not None:
            self.store.close()


def check_output_dir(path: str, flag: str) -> None:
    """Refuse an output folder that cannot be written before any work is done
    (it may not exist yet; its parent must)."""
    check_writable(path, flag, directory=True)


def dedupe(names):
    """``names`` without repeats, first occurrence first (None stays None)."""
    return None if names is None else list(dict.fromkeys(names))


def history_name(args) -> "str | None":
    """The name an ``audit run`` is recorded under: the import path for a
    user's ``package.module:attribute`` (so ``audit history PATH`` finds
    it), else the registered name (None: the algorithm's own)."""
    return args.algorithm if is_user_algorithm(args.algorithm) else None


def auto_prune(store) -> "str | None":
    """Prune ``store`` to the newest ``$AUDIT_STORE_KEEP`` fingerprints per
    audit name (default 3; 0 = never); a line saying what was removed, or
    None when nothing was."""
    from audit.execution.store import keep_from_env
    keep = keep_from_env()
    if store is None or keep == 0:
        return None
    done = store.prune(keep)
    if not done["chunks_removed"]:
        return None
    return (f"  store: removed {done['chunks_removed']} chunk(s) of "
            f"{done['fingerprints_removed'] + done['unfinished_removed']} older fingerprint(s), "
            f"keeping the newest {keep} per audit ({human_size(done['bytes_before'])} → "
            f"{human_size(done['bytes_after'])}; AUDIT_STORE_KEEP sets how many, 0 = never)")


def human_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


# The attacks that build pairs for mechanisms over a stream of answers (as
# audit.engine.scenarios.STREAM_ATTACKS; not imported from there, so that
# `audit list` does not load the engine).
STREAM_ATTACKS = ("patterns", "optimised", "search")


def check_attack_applies(attack, alg) -> None:
    """Raise ``ValueError`` if ``attack`` does not apply to ``alg``, without
    running its pilot where it has a cheap check (``applies``: the
    neighbour search simulates for seconds to build its pairs).  A
    mechanism over a stream of answers takes only the attacks built for
    it (``patterns``, ``optimised``, ``search``)."""
    if alg.learner.reads_first and attack.name not in STREAM_ATTACKS:
        raise ValueError(f"attack {attack.name} builds pairs for learners; {alg.name} is a "
                         f"mechanism over a stream of answers ({', '.join(STREAM_ATTACKS)})")
    cheap = getattr(attack, "applies", None)
    if cheap is not None:
        cheap(alg)
    else:
        attack.scenarios(alg)


def data_independence_warning(alg) -> "str | None":
    """The one-line warning for an algorithm whose parameters make its output
    (the played actions or points) independent of the losses, so that no
    audit of it can see the mechanism act: the factory says so, with the
    reason, in ``Algorithm.extra["data_independent"]`` (e.g. a mixing γ
    capped at 1).  None when it does not."""
    why = (getattr(alg, "extra", None) or {}).get("data_independent")
    if not why:
        return None
    why = one_line(why) if isinstance(why, str) else "its factory says so"
    return (f"{alg.name}: at these parameters what it plays does not depend on the losses, "
            f"so no audit can see its mechanism act on the played output — {why}")
