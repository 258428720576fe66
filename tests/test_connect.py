"""``skupper-mcp connect CLIENT`` and ``skill install``: each client's printed configuration
parses in its own format and its command starts this server (spawned over stdio and asked
for its tools); writing merges into what the user has, backs it up, keeps its mode and is
idempotent. With Claude Code's own CLI on PATH (or CLAUDE_BIN), ``claude mcp list`` in a
fresh HOME reports the server connected."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, StdioServerParameters

from skupper_mcp import data
from skupper_mcp.cli import main
from skupper_mcp.clients import CLIENTS, INSPECTOR_PACKAGE, SERVER_NAME, Format, Where
from skupper_mcp.connect import connect, install_skill, printed
from skupper_mcp.errors import ConfigError
from topology_samples import ALL_TOOLS

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

CLIENT_TIMEOUT = 60.0
COMMAND = [sys.executable, "-m", "skupper_mcp"]


def _where(tmp_path: Path, platform: str = "linux") -> Where:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Where(home=home, cwd=tmp_path, platform=platform, environ={})


def _entry(name: str, text: str) -> dict[str, Any]:
    target = CLIENTS[name]
    document = yaml.safe_load(text) if target.format is Format.YAML else json.loads(text)
    for key in target.container:
        document = document[key]
    assert set(document) == {SERVER_NAME}
    entry: dict[str, Any] = document[SERVER_NAME]
    return entry


def _launch_of(name: str, text: str) -> list[str]:
    """The command line a client would run, read back from what connect printed."""
    if name == "inspector":
        words = shlex.split(text)
        assert words[:2] == ["npx", INSPECTOR_PACKAGE]
        return words[2:]
    entry = _entry(name, text)
    if name == "goose":
        return [entry["cmd"], *entry["args"]]
    return [entry["command"], *entry["args"]]


def test_every_client_the_issue_names_is_known() -> None:
    wanted = {"claude-code", "claude-desktop", "goose", "vscode", "cursor", "gemini", "inspector"}
    assert wanted <= set(CLIENTS)


def _printed_launch(name: str, topology: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``connect NAME --print`` through the CLI, and the command line it names."""
    assert main(["connect", name, "--print", "--topology", str(topology)]) == 0
    argv = _launch_of(name, capsys.readouterr().out)
    assert os.path.isabs(argv[0]), argv
    assert argv[-3:] == ["serve", "--topology", str(topology.absolute())]
    return argv


@pytest.mark.spawns
@pytest.mark.parametrize("name", sorted(CLIENTS))
async def test_printed_configuration_starts_this_server(
    name: str, example_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _printed_launch(name, example_path, capsys)
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with Client(params, mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert tools == ALL_TOOLS


#: Goose's stdio extension as its config.yaml holds it: ExtensionEntry (``enabled`` beside the
#: flattened config, crates/goose/src/config/extensions.rs) over ExtensionConfig::Stdio
#: (``type: stdio``; crates/goose/src/agents/extension.rs), keyed by name_to_key(name).
GOOSE_STDIO_REQUIRED = {"type", "enabled", "name", "cmd", "args"}
GOOSE_STDIO_FIELDS = GOOSE_STDIO_REQUIRED | {
    "description",
    "envs",
    "env_keys",
    "timeout",
    "bundled",
    "available_tools",
}


def test_goose_entry_has_goose_stdio_extension_fields(example_path: Path) -> None:
    text = printed("goose", str(example_path), command=COMMAND)
    (key,) = yaml.safe_load(text)["extensions"]
    entry = _entry("goose", text)
    assert GOOSE_STDIO_REQUIRED <= set(entry) <= GOOSE_STDIO_FIELDS, set(entry)
    assert entry["type"] == "stdio"
    assert key == "".join(entry["name"].split()).lower() == SERVER_NAME
    assert entry["enabled"] is True
    assert isinstance(entry["cmd"], str) and isinstance(entry["description"], str)
    assert all(isinstance(a, str) for a in entry["args"])
    assert entry["envs"] == {}
    assert isinstance(entry["timeout"], int) and entry["timeout"] > 0


def test_vscode_uses_servers_with_type_stdio(example_path: Path) -> None:
    entry = _entry("vscode", printed("vscode", str(example_path), command=COMMAND))
    assert entry["type"] == "stdio"


def test_a_relative_topology_is_made_absolute(
    example_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(example_path.parent)
    argv = _launch_of("cursor", printed("cursor", example_path.name, command=COMMAND))
    assert argv[-1] == str(example_path.absolute())


def test_a_missing_topology_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="init"):
        printed("cursor", str(tmp_path / "nope.env"), command=COMMAND)


@pytest.mark.parametrize("name", [n for n, c in CLIENTS.items() if c.path is not None])
def test_connect_merges_backs_up_keeps_the_mode_and_is_idempotent(
    name: str, tmp_path: Path, example_path: Path
) -> None:
    where = _where(tmp_path)
    target = CLIENTS[name]
    assert target.path is not None
    path = target.path(where)
    path.parent.mkdir(parents=True, exist_ok=True)
    other = {"command": "other-server", "args": ["--flag"]}
    if target.format is Format.YAML:
        existing: dict[str, Any] = {"GOOSE_PROVIDER": "ollama", "extensions": {"other": other}}
        original = yaml.safe_dump(existing)
    else:
        existing = {"theme": "dark"}
        node = existing
        for key in target.container:
            node = node.setdefault(key, {})
        node["other"] = other
        original = json.dumps(existing)
    path.write_text(original)
    os.chmod(path, 0o640)

    done = connect(name, str(example_path), where=where, command=COMMAND, use_claude_cli=False)
    assert done.written is not None and done.written.changed
    text = path.read_text()
    document = yaml.safe_load(text) if target.format is Format.YAML else json.loads(text)
    servers = document
    for key in target.container:
        servers = servers[key]
    assert servers["other"] == other  # the user's other server stays
    assert SERVER_NAME in servers
    assert {k: v for k, v in document.items() if k not in target.container} == {
        k: v for k, v in existing.items() if k not in target.container
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    backup = done.written.backup
    assert backup is not None and backup.parent == path.parent
    assert backup.read_text() == original

    again = connect(name, str(example_path), where=where, command=COMMAND, use_claude_cli=False)
    assert again.written is not None and not again.written.changed
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.glob(f"{path.name}.*.bak")) == [backup.name]


@pytest.mark.parametrize("name", ["claude-code", "cursor", "gemini", "claude-desktop", "goose"])
def test_a_new_config_file_is_private(name: str, tmp_path: Path, example_path: Path) -> None:
    where = _where(tmp_path)
    done = connect(name, str(example_path), where=where, command=COMMAND, use_claude_cli=False)
    assert done.written is not None and done.written.backup is None
    assert stat.S_IMODE(done.written.path.stat().st_mode) == 0o600


def test_an_unreadable_config_is_left_alone(tmp_path: Path, example_path: Path) -> None:
    where = _where(tmp_path)
    path = where.home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ not json")
    with pytest.raises(ConfigError, match="cannot parse"):
        connect("cursor", str(example_path), where=where, command=COMMAND)
    assert path.read_text() == "{ not json"
    assert not list(path.parent.glob("*.bak"))


def test_claude_desktop_path_per_platform(tmp_path: Path) -> None:
    target = CLIENTS["claude-desktop"]
    assert target.path is not None
    mac = target.path(_where(tmp_path, "darwin"))
    assert mac.parts[-4:] == (
        "Library",
        "Application Support",
        "Claude",
        "claude_desktop_config.json",
    )
    windows = Where(tmp_path, tmp_path, "win32", {"APPDATA": str(tmp_path / "roaming")})
    assert target.path(windows) == tmp_path / "roaming" / "Claude" / "claude_desktop_config.json"


def test_inspector_connect_prints_the_command(
    example_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["connect", "inspector", "--topology", str(example_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"npx {INSPECTOR_PACKAGE} ")


def test_unknown_client_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["connect", "notepad", "--print"])
    assert exit_.value.code == 2
    assert "claude-code" in capsys.readouterr().err


def test_skill_install_writes_backs_up_and_is_idempotent(tmp_path: Path) -> None:
    first = install_skill(tmp_path)
    path = tmp_path / "skupper-mcp" / "SKILL.md"
    assert first.path == path and first.changed and first.backup is None
    assert path.read_text() == data.skill()
    assert not install_skill(tmp_path).changed
    path.write_text("my own edits\n")
    replaced = install_skill(tmp_path)
    assert replaced.backup is not None and replaced.backup.read_text() == "my own edits\n"
    assert path.read_text() == data.skill()


def test_skill_install_default_is_claude_skills_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["skill", "install"]) == 0
    assert (
        tmp_path / ".claude" / "skills" / "skupper-mcp" / "SKILL.md"
    ).read_text() == data.skill()
    assert "wrote" in capsys.readouterr().out


def _claude() -> str | None:
    return os.environ.get("CLAUDE_BIN") or shutil.which("claude")


@pytest.mark.slow
@pytest.mark.skipif(_claude() is None, reason="Claude Code's CLI is not installed (CLAUDE_BIN)")
def test_claude_code_cli_lists_the_server_connected(tmp_path: Path, example_path: Path) -> None:
    claude = _claude()
    assert claude is not None
    home = tmp_path / "home"
    home.mkdir()
    other = {"type": "stdio", "command": "other-server", "args": [], "env": {}}
    original = json.dumps({"theme": "dark", "mcpServers": {"other": other}})
    (home / ".claude.json").write_text(original)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude)
    environ = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for key in ("ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"):
        environ.pop(key, None)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, env=environ, cwd=tmp_path, text=True, capture_output=True, timeout=180
        )

    connect = [sys.executable, "-m", "skupper_mcp", "connect", "claude-code"]
    connected = run(*connect, "--topology", str(example_path))
    assert connected.returncode == 0, connected.stdout + connected.stderr
    assert "Claude Code's CLI" in connected.stdout
    again = run(*connect, "--topology", str(example_path))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing changed" in again.stdout  # the second run neither backs up nor re-adds
    (backup,) = home.glob(".claude.json.*.bak")  # the first run's; the second changed nothing
    assert backup.read_text() == original
    listed = run("claude", "mcp", "list")
    print(listed.stdout)
    line = next(line for line in listed.stdout.splitlines() if line.startswith(f"{SERVER_NAME}:"))
    assert "Connected" in line, listed.stdout + listed.stderr
    document = json.loads((home / ".claude.json").read_text())
    assert document["mcpServers"][SERVER_NAME]["args"][-1] == str(example_path.absolute())
    # the user's other server stays (the rest of the file is Claude Code's to rewrite: it
    # dropped "theme", 2.1.197; the backup has it)
    assert document["mcpServers"]["other"] == other


def _gemini() -> str | None:
    return os.environ.get("GEMINI_BIN") or shutil.which("gemini")


@pytest.mark.slow
@pytest.mark.skipif(_gemini() is None, reason="Gemini CLI is not installed (GEMINI_BIN)")
def test_gemini_cli_lists_the_server_connected(tmp_path: Path, example_path: Path) -> None:
    """``gemini mcp list`` needs no sign-in; it starts user-level servers only in a folder
    the user trusts, which Gemini CLI records in ~/.gemini/trustedFolders.json."""
    gemini = _gemini()
    assert gemini is not None
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir(parents=True)
    environ = {**os.environ, "HOME": str(home)}
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "XDG_CONFIG_HOME"):
        environ.pop(key, None)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, env=environ, cwd=work, text=True, capture_output=True, timeout=180
        )

    connected = run(
        sys.executable, "-m", "skupper_mcp", "connect", "gemini", "--topology", str(example_path)
    )
    assert connected.returncode == 0, connected.stdout + connected.stderr
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(work): "TRUST_FOLDER"}))
    listed = run(gemini, "mcp", "list")
    said = listed.stdout + listed.stderr  # Gemini CLI writes the list to stderr
    print(said)
    line = next(x for x in said.splitlines() if f"{SERVER_NAME}:" in x)
    assert "Connected" in line, said


def _inspector() -> str | None:
    return os.environ.get("INSPECTOR_BIN") or shutil.which("mcp-inspector")


@pytest.mark.slow
@pytest.mark.skipif(
    _inspector() is None, reason="the MCP Inspector is not installed (INSPECTOR_BIN)"
)
def test_the_inspector_lists_the_tools_with_the_printed_command(example_path: Path) -> None:
    """The Inspector's CLI mode (``--cli ... --method tools/list``) with the command line
    ``connect inspector`` prints, npx replaced by the installed Inspector."""
    inspector = _inspector()
    assert inspector is not None
    line = printed("inspector", str(example_path))
    words = shlex.split(line)
    assert words[:2] == ["npx", INSPECTOR_PACKAGE]
    listed = subprocess.run(
        [inspector, "--cli", *words[2:], "--method", "tools/list"],
        text=True,
        capture_output=True,
        timeout=180,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert {t["name"] for t in json.loads(listed.stdout)["tools"]} == ALL_TOOLS
