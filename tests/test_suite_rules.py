"""Rules the test suite keeps, read from its sources (so the e2e half's files are held to them
by ``make unit`` too)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if ".venv" not in p.parts)


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def is_test_module(name: str) -> bool:
    return name.rsplit(".", 1)[-1].startswith("test_")


def test_no_test_module_imports_another() -> None:
    """What tests share lives in helper modules (``site_replay``, ``van_page``,
    ``lifecycle/helpers``...), never in a test module another one imports."""
    found = []
    for path in SOURCES:
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and is_test_module(node.module):
                found.append(f"{path.relative_to(TESTS)}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.relative_to(TESTS)}:{node.lineno} import {a.name}"
                    for a in node.names
                    if is_test_module(a.name)
                ]
    assert found == [], "move what these import into a helper module: " + "; ".join(found)


def mcp_clients(module: ast.Module) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(module)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Client")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Client")
        )
    ]


def test_every_mcp_client_bounds_its_requests() -> None:
    """An MCP client without ``read_timeout_seconds`` would hang the suite on a server that
    never answers; a module that opens one also requests the ``bounded_mcp_clients``
    fixture (tests/conftest.py), which fails such a client at run time."""
    unbounded, unguarded = [], []
    for path in SOURCES:
        module = tree(path)
        calls = mcp_clients(module)
        where = str(path.relative_to(TESTS))
        unbounded += [
            f"{where}:{c.lineno}"
            for c in calls
            if not any(k.arg == "read_timeout_seconds" for k in c.keywords)
        ]
        if calls and "bounded_mcp_clients" not in path.read_text():
            unguarded.append(where)
    assert unbounded == [], f"MCP clients without read_timeout_seconds: {unbounded}"
    assert unguarded == [], (
        'add pytestmark = pytest.mark.usefixtures("bounded_mcp_clients") to: '
        + ", ".join(unguarded)
    )
