"""``connect`` changes only its own entry in another program's file (issue 43, item 6): the
rest of the file stays byte for byte, or the file is refused with the reason and left as it
was. Before, Goose's config.yaml was read as YAML 1.1 and dumped again (``DEBUG: yes`` came
back ``true``, ``UMASK: 0755`` ``493``, ``SCHEDULE: 12:30`` ``750``, a date crashed
connect), and JSON was dumped again (``1e400`` came back ``Infinity``, which Node cannot
parse; of a key written twice one block was dropped; every file re-indented)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from skupper_mcp.cli import main
from skupper_mcp.clients import SERVER_NAME

GOOSE = """\
# Goose's own settings, and another tool's
GOOSE_PROVIDER: ollama
GOOSE_MODEL: "granite3.3:8b"
DEBUG: yes
UMASK: 0755
SCHEDULE: 12:30
SINCE: 2024-01-02
AT: 2001-12-14t21:59:43.10-05:00
NOTHING: ~
RATIO: 1.50
extensions:
    developer:
        bundled: true
        enabled: true   # keep
        name: developer
        timeout: 300
        type: builtin
    other:
        args:
        - --flag
        cmd: other-server
        enabled: false
        type: stdio

tail_setting: 'quoted'
"""

CURSOR = """\
{
    "theme": "dark",
    "ratio": 1.10,
    "big": 123456789012345678901234567890,
    "name": "caf\\u00e9",
    "mcpServers": {
        "other": {"command": "other-server", "args": []}
    },
    "last": [1, 2,
             3]
}
"""


def _one_chunk_added(old: str, new: str) -> str:
    """What ``new`` has that ``old`` has not, when that is one contiguous chunk and every
    byte of ``old`` is kept around it."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < len(old) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    assert start + end == len(old), f"bytes of the old file changed:\n{new}"
    return new[start : len(new) - end]


@pytest.fixture
def connect(
    tmp_path: Path, example_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], int]:
    """``connect NAME`` with the example topology, HOME (and the folder it runs in) at
    tmp_path and no ``claude`` on PATH: its exit code."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude`
    monkeypatch.chdir(tmp_path)
    return lambda name: main(["connect", name, "--topology", str(example_path)])


@pytest.fixture
def refused(
    connect: Callable[[str], int], capsys: pytest.CaptureFixture[str]
) -> Callable[[str, Path, str], str]:
    """``connect NAME`` over a file holding text it must not edit: exit 2, the file named in
    what it said and left as it was, no backup made; what it said."""

    def run(name: str, path: Path, text: str) -> str:
        path.write_text(text)
        assert connect(name) == 2
        err = capsys.readouterr().err
        assert str(path) in err
        assert path.read_text() == text
        assert not list(path.parent.glob("*.bak"))
        return err

    return run


def _goose(home: Path) -> Path:
    path = home / ".config" / "goose" / "config.yaml"
    path.parent.mkdir(parents=True)
    return path


def test_goose_keeps_every_other_line_as_written(
    tmp_path: Path, connect: Callable[[str], int]
) -> None:
    path = _goose(tmp_path)
    path.write_text(GOOSE)
    assert connect("goose") == 0
    text = path.read_text()
    added = _one_chunk_added(GOOSE, text)
    assert added.startswith("      name: skupper\n") or f"{SERVER_NAME}:" in added
    document = YAML(typ="safe").load(text)  # YAML 1.2, as Goose reads it
    assert document["DEBUG"] == "yes" and document["SCHEDULE"] == "12:30"
    assert document["extensions"][SERVER_NAME]["cmd"]
    assert set(document["extensions"]) == {"developer", "other", SERVER_NAME}

    # our entry changed (another installation): only its lines are replaced
    entry = document["extensions"][SERVER_NAME]
    path.write_text(text.replace(entry["cmd"], "/old/skupper-mcp"))
    assert connect("goose") == 0
    assert path.read_text() == text
    assert connect("goose") == 0  # nothing to change
    assert len(list(path.parent.glob("config.yaml.*.bak"))) == 2


@pytest.mark.parametrize(
    "before",
    ["", "# nothing yet\n", "extensions:\n", "extensions: {}\nx: 1", "extensions:\n  a: {}\n"],
    ids=["empty", "comment", "null", "empty-flow", "no-newline-at-end"],
)
def test_goose_edge_layouts(before: str, tmp_path: Path, connect: Callable[[str], int]) -> None:
    path = _goose(tmp_path)
    path.write_text(before)
    assert connect("goose") == 0
    document = YAML(typ="safe").load(path.read_text())
    assert SERVER_NAME in document["extensions"]
    if before.startswith("#"):
        assert path.read_text().startswith(before)


def test_json_keeps_every_other_byte(tmp_path: Path, connect: Callable[[str], int]) -> None:
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(CURSOR)
    assert connect("cursor") == 0
    text = path.read_text()
    added = _one_chunk_added(CURSOR, text)
    assert added.startswith(',\n        "skupper": {\n            "command": ')
    document = json.loads(text)
    assert document["mcpServers"]["other"] == {"command": "other-server", "args": []}
    entry = document["mcpServers"][SERVER_NAME]
    path.write_text(text.replace(json.dumps(entry["command"]), '"/old/skupper-mcp"'))
    assert connect("cursor") == 0
    assert path.read_text() == text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": 1e400, "mcpServers": {}}', "beyond a double's range"),
        ('{"a": NaN}', "NaN is not JSON"),
        ('{"a": -Infinity}', "-Infinity is not JSON"),
        (
            '{"mcpServers": {"a": {}}, "mcpServers": {"b": {}}}',
            'the key "mcpServers" appears twice',
        ),
    ],
    ids=["overflow", "nan", "infinity", "duplicate"],
)
def test_json_a_reader_would_read_differently_is_refused(
    text: str, why: str, tmp_path: Path, refused: Callable[[str, Path, str], str]
) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    err = refused("gemini", path, text)
    assert why in err and "cannot parse" in err


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("DEBUG: yes\nDEBUG: no\n", 'found duplicate key "DEBUG"'),
        ("extensions: {other: {cmd: x}}\n", "flow mapping"),
        ("extensions: [a]\n", "not a mapping"),
    ],
    ids=["duplicate", "flow", "sequence"],
)
def test_goose_a_file_we_cannot_edit_in_place_is_refused(
    text: str, why: str, tmp_path: Path, refused: Callable[[str, Path, str], str]
) -> None:
    assert why in refused("goose", _goose(tmp_path), text)


def test_json_a_null_container_is_replaced_by_ours(
    tmp_path: Path, connect: Callable[[str], int]
) -> None:
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  "theme": "dark",\n  "mcpServers": null\n}\n')
    assert connect("cursor") == 0
    text = path.read_text()
    assert text.startswith('{\n  "theme": "dark",\n  "mcpServers": {\n    "skupper": {\n')
    assert list(json.loads(text)["mcpServers"]) == [SERVER_NAME]
