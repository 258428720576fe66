"""Issue 42: the parsers in ``facts/`` are the only code that reads a status word (Skupper's
``Ready``, podman's ``running``, systemd's ``active``, loginctl's ``Linger=yes``...).
Everything else judges by their typed answers (``ResourceStatus.ready``,
``ContainerState.running``, ``UnitState.active``, ``SiteFacts.lingering``) and by
``engine/predicates.py``: a release that words its status otherwise is then one parser's
change, not a hunt through the rules."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "skupper_mcp"
FACTS = SRC / "facts"

#: Words hosts and APIs write in their status, never ours (our own typed values, such as
#: a site's ``stopped`` or an outcome's ``failed``, are not among them).
STATUS_WORDS = frozenset(
    {
        # Skupper's resource status, Kubernetes pod phases
        "Ready",
        "Pending",
        "Running",
        "Succeeded",
        "Failed",
        "OK",
        # podman's container states
        "running",
        "exited",
        "created",
        "paused",
        # systemd's unit states
        "active",
        "inactive",
        "activating",
        "deactivating",
        "not-found",
        "loaded",
        # loginctl
        "Linger=yes",
        "=yes",
    }
)
COMPARES = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _words(node: ast.expr) -> list[str]:
    """The status words a compared expression is, or holds (a tuple, list or set)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in STATUS_WORDS else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [w for element in node.elts for w in _words(element)]
    return []


def status_word_reads(path: Path, root: Path = SRC) -> list[str]:
    """Where a module compares with a status word, or asks a string whether it ends or
    starts with one (its lines named from ``root``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        words: list[str] = []
        if isinstance(node, ast.Compare) and any(isinstance(op, COMPARES) for op in node.ops):
            for side in [node.left, *node.comparators]:
                words += _words(side)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("endswith", "startswith")
        ):
            for arg in node.args:
                words += _words(arg)
        line = getattr(node, "lineno", 0)
        found += [f"{path.relative_to(root)}:{line} {w!r}" for w in words]
    return found


def test_no_module_outside_facts_compares_a_status_word() -> None:
    found = [
        line
        for path in sorted(SRC.rglob("*.py"))
        if FACTS not in path.parents
        for line in status_word_reads(path)
    ]
    assert found == [], "read it in facts/ and judge by the typed answer: " + "; ".join(found)


def test_the_rule_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'ok = link.status == "Ready"\n'
        'up = state in ("running", "paused")\n'
        'on = linger.endswith("=yes")\n'
        'mine = outcome == "failed"\n'
    )
    assert [line.split(" ", 1)[1] for line in status_word_reads(sample, tmp_path)] == [
        "'Ready'",
        "'running'",
        "'paused'",
        "'=yes'",
    ]
