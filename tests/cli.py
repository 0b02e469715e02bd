"""``audit_here``: the ``audit`` command run inside the test process.

The installed command is tested as a process where that is the point (exit
codes and their one line on stderr in ``test_exit_codes``, signals in
``test_store``).  Everywhere else, the documentation's ``audit`` lines
included (``test_docs``), a test only needs what ``audit`` prints and the
code it exits with, and a new process spends most of a second importing
numpy and scipy before it reads its first flag; ``audit_here`` calls the
same ``main`` the console script calls (``audit.cli.main:main``), in a
given folder and environment, and returns the same ``CompletedProcess`` a
subprocess would.

May import: ``audit.cli.main``.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def _inside(cwd, env):
    """``cwd``, ``env`` set for the call; ``sys.path`` (the command puts its
    folder first, to import user code) and the environment restored after."""
    old_cwd, old_path, old_env = os.getcwd(), list(sys.path), dict(os.environ)
    os.chdir(cwd)
    for key, value in (env or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        os.environ.clear()
        os.environ.update(old_env)


def audit_here(*args, cwd=ROOT, env=None) -> subprocess.CompletedProcess:
    """``audit ARGS`` in ``cwd`` with ``env`` added to the environment (a
    ``None`` value unsets the variable): its exit code, standard output and
    standard error."""
    from audit.cli.main import main
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with _inside(cwd, env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return subprocess.CompletedProcess(["audit", *argv], code, out.getvalue(), err.getvalue())
