"""pytest plugin: ``--audit-scale`` and the ``privacy_audit`` marker.

May import: ``audit.testing``.
"""
from __future__ import annotations

import math

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("privacy audit")
    group.addoption("--audit-scale", default=None, metavar="F",
                    help="multiply the budget (trials) of every assert_private call by F, a "
                         "finite number > 0 (e.g. 0.1 for a fast local run)")


def parse_scale(text) -> float:
    """``--audit-scale``'s value, or ``pytest.UsageError`` (one line)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise pytest.UsageError(f"--audit-scale must be a finite number > 0, got {text!r}")
    return value


def pytest_configure(config):
    config.addinivalue_line("markers", "privacy_audit: a test that runs a privacy audit")
    scale = config.getoption("--audit-scale", default=None)
    if scale is not None:
        from audit.testing import set_budget_scale
        set_budget_scale(parse_scale(scale))
