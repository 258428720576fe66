"""What each MCP client needs to start this server: where its configuration lives, in what
format, under which key our entry goes, what the entry holds, and how the user checks it.

Pure: no file, process or environment is read here (``skupper_mcp.connect`` does the I/O
and hands in the home directory, the platform and the environment). Every client's entry is
the same launch, this installation's command and topology (``Launch``), spelled in that
client's own vocabulary, from its own documentation:

- Claude Code: https://code.claude.com/docs/en/mcp (``claude mcp add --scope user``; user
  scope lives in ``~/.claude.json`` under ``mcpServers``, entries ``type: stdio``,
  ``command``, ``args``, ``env``).
- Claude Desktop: https://modelcontextprotocol.io/quickstart/user
  (``claude_desktop_config.json`` in ``~/Library/Application Support/Claude`` on macOS,
  ``%APPDATA%\\Claude`` on Windows; ``mcpServers`` with ``command`` and ``args``). There is no
  Linux build of Anthropic's; the Linux path is the XDG one the community builds read.
- Goose: https://block.github.io/goose/docs/guides/config-files (``~/.config/goose/config.yaml``,
  ``%APPDATA%\\Block\\goose\\config\\config.yaml`` on Windows; ``extensions:`` keyed by name,
  each ``type: stdio``, ``cmd``, ``args``, ``envs``, ``timeout``, ``enabled``; in Goose's
  source, ExtensionEntry in crates/goose/src/config/extensions.rs over ExtensionConfig::Stdio
  in crates/goose/src/agents/extension.rs).
- VS Code: https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
  (``.vscode/mcp.json`` in the workspace, ``servers`` with ``type: stdio``, ``command``,
  ``args``; checked with the command ``MCP: List Servers``).
- Cursor: https://cursor.com/docs/mcp (``~/.cursor/mcp.json``, ``mcpServers`` with
  ``command``, ``args``, ``env``).
- Gemini CLI: https://geminicli.com/docs/tools/mcp-server (``~/.gemini/settings.json``,
  ``mcpServers`` with ``command``, ``args``, ``env``, ``timeout`` in ms, ``trust``).
- MCP Inspector: https://modelcontextprotocol.io/docs/tools/inspector (no file: ``npx
  @modelcontextprotocol/inspector COMMAND ARGS...``).
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath
from typing import Any

from skupper_mcp.errors import ConfigError

#: The name every client knows the server by: SKILL.md and the prompts call its tools
#: ``mcp__skupper__...``, so a client must register it under exactly this name.
SERVER_NAME = "skupper"

#: How long Goose waits for one tool call, in seconds: a setup over several hosts takes minutes.
GOOSE_TIMEOUT = 300
#: Gemini CLI's per-request timeout is in milliseconds (its default is 10 minutes).
GEMINI_TIMEOUT_MS = 600_000

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"


@dataclass(frozen=True)
class Launch:
    """How a client starts this server: an absolute command and its arguments."""

    command: str
    args: tuple[str, ...]

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


def launch(command: list[str], topology: PurePath) -> Launch:
    """The launch of ``command`` (this installation's ``skupper-mcp``, or its interpreter with
    ``-m skupper_mcp``) serving stdio for the topology at the absolute path ``topology``."""
    if not topology.is_absolute():
        raise ConfigError(
            "a client starts the server from a directory of its own: the topology path "
            "must be absolute",
            path=str(topology),
        )
    return Launch(command[0], (*command[1:], "serve", "--topology", str(topology)))


class Format(Enum):
    JSON = "json"
    YAML = "yaml"
    #: nothing to write: the client is a command line
    COMMAND = "command"


@dataclass(frozen=True)
class Where:
    """What the I/O side knows about this machine, handed in so the table stays pure."""

    home: Path
    cwd: Path
    platform: str  # sys.platform
    environ: Mapping[str, str]

    def xdg_config(self) -> Path:
        value = self.environ.get("XDG_CONFIG_HOME", "")
        return Path(value) if value else self.home / ".config"

    def appdata(self) -> Path:
        value = self.environ.get("APPDATA", "")
        return Path(value) if value else self.home / "AppData" / "Roaming"


@dataclass(frozen=True)
class Client:
    """One client: its file, format, the keys our entry sits under, the entry, the check."""

    name: str
    title: str
    format: Format
    #: the configuration file, or None for a client without one (the Inspector)
    path: Callable[[Where], Path] | None
    #: the keys from the document's root to the mapping of servers
    container: tuple[str, ...]
    entry: Callable[[Launch], dict[str, Any]]
    #: what the user runs or looks at to see the server connected
    check: str
    doc: str
    #: the file may hold the user's secrets (tokens of other servers, session state)
    private: bool = True
    #: the file is in the current folder (a repository's): a link there that leads back
    #: into the folder is refused (``skupper_mcp.userfiles``)
    workspace: bool = False


def _claude_code_path(where: Where) -> Path:
    return where.home / ".claude.json"


def _claude_desktop_path(where: Where) -> Path:
    if where.platform == "darwin":
        base = where.home / "Library" / "Application Support" / "Claude"
    elif where.platform.startswith("win"):
        base = where.appdata() / "Claude"
    else:
        base = where.xdg_config() / "Claude"
    return base / "claude_desktop_config.json"


def _goose_path(where: Where) -> Path:
    if where.platform.startswith("win"):
        return where.appdata() / "Block" / "goose" / "config" / "config.yaml"
    return where.xdg_config() / "goose" / "config.yaml"


def _command_args(run: Launch) -> dict[str, Any]:
    return {"command": run.command, "args": list(run.args)}


def _typed_stdio(run: Launch) -> dict[str, Any]:
    return {"type": "stdio", **_command_args(run)}


def _claude_code_entry(run: Launch) -> dict[str, Any]:
    return {**_typed_stdio(run), "env": {}}


def _goose_entry(run: Launch) -> dict[str, Any]:
    return {
        "name": SERVER_NAME,
        "type": "stdio",
        "enabled": True,
        "cmd": run.command,
        "args": list(run.args),
        "envs": {},
        "timeout": GOOSE_TIMEOUT,
        "description": "Skupper network that brings remote GPU-hosted models to localhost",
    }


def _gemini_entry(run: Launch) -> dict[str, Any]:
    return {**_command_args(run), "timeout": GEMINI_TIMEOUT_MS}


def _inspector_entry(run: Launch) -> dict[str, Any]:
    return {"command": "npx", "args": [INSPECTOR_PACKAGE, *run.argv]}


CLIENTS: dict[str, Client] = {
    client.name: client
    for client in (
        Client(
            "claude-code",
            "Claude Code",
            Format.JSON,
            _claude_code_path,
            ("mcpServers",),
            _claude_code_entry,
            f"claude mcp list   (or: claude mcp get {SERVER_NAME})",
            "https://code.claude.com/docs/en/mcp",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            Format.JSON,
            _claude_desktop_path,
            ("mcpServers",),
            _command_args,
            "quit and restart Claude Desktop, then Settings > Developer lists "
            f"'{SERVER_NAME}' as running",
            "https://modelcontextprotocol.io/quickstart/user",
        ),
        Client(
            "goose",
            "Goose",
            Format.YAML,
            _goose_path,
            ("extensions",),
            _goose_entry,
            "goose info -v   (shows the config file and its extensions), then in "
            "`goose session` the skupper tools are listed",
            "https://block.github.io/goose/docs/guides/config-files",
        ),
        Client(
            "vscode",
            "VS Code",
            Format.JSON,
            lambda where: where.cwd / ".vscode" / "mcp.json",
            ("servers",),
            _typed_stdio,
            "in this workspace, Command Palette > 'MCP: List Servers' shows "
            f"'{SERVER_NAME}' (Start it there if it is stopped)",
            "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
            private=False,
            workspace=True,
        ),
        Client(
            "cursor",
            "Cursor",
            Format.JSON,
            lambda where: where.home / ".cursor" / "mcp.json",
            ("mcpServers",),
            _command_args,
            f"Cursor Settings > MCP lists '{SERVER_NAME}' with its tools",
            "https://cursor.com/docs/mcp",
        ),
        Client(
            "gemini",
            "Gemini CLI",
            Format.JSON,
            lambda where: where.home / ".gemini" / "settings.json",
            ("mcpServers",),
            _gemini_entry,
            "gemini mcp list   (or /mcp in a gemini session), in a folder you trust: Gemini CLI "
            "shows every server Disabled in an untrusted one",
            "https://geminicli.com/docs/tools/mcp-server",
        ),
        Client(
            "inspector",
            "MCP Inspector",
            Format.COMMAND,
            None,
            (),
            _inspector_entry,
            "the Inspector opens in the browser: Connect, then Tools > List Tools",
            "https://modelcontextprotocol.io/docs/tools/inspector",
            private=False,
        ),
    )
}


def client(name: str) -> Client:
    """The client called ``name``; ConfigError naming the known ones otherwise."""
    try:
        return CLIENTS[name]
    except KeyError:
        raise ConfigError(f"unknown client {name!r}; known clients: {', '.join(CLIENTS)}") from None


def parse(target: Client, text: str, path: PurePath) -> dict[str, Any]:
    """An existing configuration file as a mapping (an empty file is an empty mapping),
    read strictly (``config_edit``: JSON as Node reads it, YAML as 1.2). Anything else is a
    ConfigError: we never overwrite a file we cannot read back exactly."""
    if not text.strip():
        return {}
    from skupper_mcp import config_edit  # ruamel.yaml: not at every start of the CLI or server

    try:
        if target.format is Format.YAML:
            document = config_edit.strict_yaml(text)
        else:
            document = config_edit.strict_json(text)
    except ConfigError as error:
        raise ConfigError(
            f"cannot parse {target.title}'s configuration ({error}); fix or move it, then "
            "run connect again",
            path=str(path),
        ) from error
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(
            f"{target.title}'s configuration is not a mapping; fix or move it",
            path=str(path),
        )
    return document


def merge(target: Client, document: Mapping[str, Any], run: Launch) -> dict[str, Any]:
    """``document`` with our entry set under the client's container, every other key (and
    every other server) kept as it was. The input is not changed."""
    merged: dict[str, Any] = copy.deepcopy(dict(document))
    node = merged
    for depth, key in enumerate(target.container):
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict):
            where = ".".join(target.container[: depth + 1])
            raise ConfigError(
                f"{target.title}'s configuration has {where} that is not a mapping; fix it by hand"
            )
        node = child
    node[SERVER_NAME] = target.entry(run)
    return merged


def render(target: Client, document: Mapping[str, Any]) -> str:
    """The document as a new file of the client holds it."""
    if target.format is Format.YAML:
        from skupper_mcp import config_edit

        return config_edit.yaml_text(dict(document))
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def updated(target: Client, text: str | None, run: Launch, path: PurePath) -> str:
    """The client's file ``text`` (None: there is none) with our entry set, every byte of
    the rest as it was; a ConfigError naming the file and why when that cannot be done."""
    if text is None or (target.format is Format.JSON and not text.strip()):
        return render(target, merge(target, {}, run))
    document = parse(target, text, path)
    try:
        merge(target, document, run)  # the container is a mapping, or a ConfigError says not
    except ConfigError as error:
        raise ConfigError(str(error), path=str(path)) from error
    from skupper_mcp import config_edit

    edit = config_edit.json_with_entry
    if target.format is Format.YAML:
        edit = config_edit.yaml_with_entry
    try:
        changed = edit(text, target.container, SERVER_NAME, target.entry(run))
        after = parse(target, changed, path)
    except ConfigError as error:
        raise ConfigError(
            f"cannot set our entry in {target.title}'s configuration in place ({error}); "
            f"nothing was written. Add it by hand (`skupper-mcp connect {target.name} --print`)",
            path=str(path),
        ) from error
    container = after
    for key in target.container:
        container = container.get(key) or {}
    same_rest = config_edit.without(after, target.container, SERVER_NAME) == config_edit.without(
        document, target.container, SERVER_NAME
    )
    if container.get(SERVER_NAME) != target.entry(run) or not same_rest:
        raise ConfigError(
            f"setting our entry in {target.title}'s configuration in place would change "
            "more than our entry; nothing was written. Add it by hand "
            f"(`skupper-mcp connect {target.name} --print`)",
            path=str(path),
        )
    return changed


def snippet(target: Client, run: Launch) -> str:
    """What ``connect --print`` shows: the client's file holding only our entry, or for the
    Inspector its command line."""
    if target.format is Format.COMMAND:
        return shlex.join(["npx", INSPECTOR_PACKAGE, *run.argv]) + "\n"
    return render(target, merge(target, {}, run))


def claude_mcp_add(run: Launch) -> list[str]:
    """Claude Code's own way to add the server for every project of the user."""
    return [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "--transport",
        "stdio",
        SERVER_NAME,
        "--",
        *run.argv,
    ]


def claude_mcp_remove() -> list[str]:
    """Clears our user-scope entry first, so that connect run twice replaces instead of failing."""
    return ["claude", "mcp", "remove", "--scope", "user", SERVER_NAME]


def plugin_skill(skill: str, plugin: str) -> str:
    """The packaged SKILL.md as a Claude Code plugin ships it: Claude Code names a plugin's
    MCP tools ``mcp__plugin_<plugin>_<server>__<tool>``
    (https://code.claude.com/docs/en/plugins-reference), so ``allowed-tools`` and every tool
    reference takes that prefix."""
    return skill.replace(f"mcp__{SERVER_NAME}__", f"mcp__plugin_{plugin}_{SERVER_NAME}__")
