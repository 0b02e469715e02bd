"""pytest plugin: ``--audit-scale`` and the ``privacy_audit`` marker."""
from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("privacy audit")
    group.addoption("--audit-scale", type=float, default=None,
                    help="multiply the budget (trials) of every assert_private call")


def pytest_configure(config):
    config.addinivalue_line("markers", "privacy_audit: a test that runs a privacy audit")
    scale = config.getoption("--audit-scale", default=None)
    if scale is not None:
        from audit.testing import set_budget_scale
        set_budget_scale(scale)
