"""The tool operations: one module per tool (setup, up and down, teardown, status,
test_model, diagnose, logs, precheck, resolve), each a function of the site map."""

from . import diagnose, logs, model_checks, precheck, resolve, setup, status, teardown, updown

__all__ = [
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
