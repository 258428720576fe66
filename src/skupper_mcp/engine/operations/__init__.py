"""The tool operations: one module per tool (setup, up and down, teardown, status,
test_model, diagnose, logs, precheck, resolve, the models catalog), each a function of the
site map."""

from . import (
    catalog,
    diagnose,
    logs,
    model_checks,
    precheck,
    resolve,
    setup,
    status,
    teardown,
    updown,
)

__all__ = [
    "catalog",
    "diagnose",
    "logs",
    "model_checks",
    "precheck",
    "resolve",
    "setup",
    "status",
    "teardown",
    "updown",
]
