"""No script body is assembled in a Python string longer than a line: the scripts the
product sends are ``.sh`` files shipped with the package (``skupper_mcp/scripts/``), checked
by shellcheck in ``make lint``, and take their values as positional parameters.

The rules enforced: no string literal or f-string in ``src/`` (docstrings aside) spans more
than one line and has a line that starts like shell (``if [``, ``then``, ``fi``, ``for X
in``, ``do``, ``done``, ``case``, ``esac``, ``echo``, ``printf``, ``set -``, ``exit``, a
``#!`` line, a variable assignment; a keyword that ends a block alone on its line); and no
script is assembled from lines either: a ``script(...)`` call takes one line (or a shipped
script's body), a ``Script(...)`` one body line. The modules still to be moved are named in
``NOT_YET``; an entry that no longer matches fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

PRODUCT = Path(__file__).resolve().parent.parent / "src" / "skupper_mcp"

_SHELL_LINE = re.compile(
    r"((then|else|fi|do|done|esac|\}|\))\s*;?$|if \[|for \w+ in |case .* in$|echo |printf "
    r"|set -|exit( [0-9$\"]|$)|#!/|[A-Za-z_][A-Za-z0-9_]*=[\"'$(])"
)

#: Script bodies still assembled in Python, each a ``path:function`` (none left).
NOT_YET: set[str] = set()


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr):
                found.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            found.update(id(v) for v in node.values)  # parts of one f-string
    return found


def shell_literals(path: Path, root: Path = PRODUCT) -> list[str]:
    """``path:function`` of every multi-line string literal in ``path`` that reads as shell."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    found = []
    for scope in ast.walk(tree):
        if not isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(scope):
            text = _text(node)
            if id(node) in skip or text is None or "\n" not in text.strip("\n"):
                continue
            if any(_SHELL_LINE.match(line.strip()) for line in text.split("\n")):
                name = "" if isinstance(scope, ast.Module) else scope.name
                found.append(f"{path.relative_to(root)}:{name}")
    # a literal inside a function is found from the module too: keep the function's name
    named = {f for f in found if not f.endswith(":")}
    return sorted(named | {f for f in found if f.endswith(":") and not _inside(f, named)})


def assembled_scripts(path: Path, root: Path = PRODUCT) -> list[str]:
    """``path:function`` of every script built from more than one line of Python: a call of
    ``script`` with two or more lines, or of ``Script`` with a body tuple of two or more
    (``connectors/shell.py`` and ``sites/work.py`` are the helpers that join them)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for scope in ast.walk(tree):
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            lines: list[ast.expr] = []
            if node.func.id == "script":
                lines = list(node.args)
            elif node.func.id == "Script" and len(node.args) > 1:
                body = node.args[1]
                lines = list(body.elts) if isinstance(body, ast.Tuple | ast.List) else [body]
            if len(lines) > 1 or any(isinstance(line, ast.Starred) for line in lines):
                found.append(f"{path.relative_to(root)}:{scope.name}")
    return sorted(set(found))


#: The helpers that join a script's lines: the prelude and ``set -e`` before a body.
HELPERS = {"connectors/shell.py", "sites/work.py"}


def _inside(module_entry: str, named: set[str]) -> bool:
    return any(n.startswith(module_entry) for n in named)


def test_no_script_body_is_assembled_in_python() -> None:
    found = {entry for path in sorted(PRODUCT.rglob("*.py")) for entry in shell_literals(path)}
    assert found - NOT_YET == set(), "move these scripts into skupper_mcp/scripts/*.sh"
    assert NOT_YET - found - _assembled_entries() == set(), "moved: take them off NOT_YET"


def _assembled_entries() -> set[str]:
    return {
        entry
        for path in sorted(PRODUCT.rglob("*.py"))
        if str(path.relative_to(PRODUCT)) not in HELPERS
        for entry in assembled_scripts(path)
    }


def test_no_script_is_assembled_from_lines() -> None:
    found = {
        entry
        for path in sorted(PRODUCT.rglob("*.py"))
        if str(path.relative_to(PRODUCT)) not in HELPERS
        for entry in assembled_scripts(path)
    }
    assert found - NOT_YET == set(), "move these scripts into skupper_mcp/scripts/*.sh"
    assert NOT_YET - found - _literal_entries() == set(), "moved: take them off NOT_YET"


def _literal_entries() -> set[str]:
    return {entry for path in sorted(PRODUCT.rglob("*.py")) for entry in shell_literals(path)}


def _sample(folder: Path, text: str, rule: Callable[[Path, Path], list[str]]) -> list[str]:
    """What ``rule`` finds in sample.py (in ``folder``) holding ``text``."""
    sample = folder / "sample.py"
    sample.write_text(text)
    return rule(sample, folder)


ASSEMBLED = [
    ('def s(x):\n    return script(f"a={x}", "echo $a")\n', ["sample.py:s"]),
    ('def s(x):\n    return Script("sum", ("a=1", "echo $a"), "done")\n', ["sample.py:s"]),
    ("def s(x):\n    return script(*lines)\n", ["sample.py:s"]),
    (
        'def s(x):\n    return Script("sum", (f"podman rm -f {x}",), "done")\n'
        "def t(x):\n    return script(program_body(x))\n",
        [],
    ),
]
LITERALS = [
    ('def s(x):\n    return f"if [ -f {x} ]; then\\n  echo yes\\nfi"\n', ["sample.py:s"]),
    ('X = (\n    "a=$(id -u)\\n"\n    "b"\n)\n', ["sample.py:"]),
    ('def s(x):\n    """Docs.\n\n    echo this is prose"""\n    return "one line"\n', []),
]


@pytest.mark.parametrize(("text", "found"), ASSEMBLED)
def test_the_rule_finds_a_script_assembled_from_lines(
    tmp_path: Path, text: str, found: list[str]
) -> None:
    assert _sample(tmp_path, text, assembled_scripts) == found


@pytest.mark.parametrize(("text", "found"), LITERALS)
def test_the_rule_finds_a_script_in_an_f_string(
    tmp_path: Path, text: str, found: list[str]
) -> None:
    assert _sample(tmp_path, text, shell_literals) == found
