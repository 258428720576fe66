"""``skupper-mcp connect CLIENT`` and ``skupper-mcp skill install``: the file and process side
of ``skupper_mcp.clients`` (which knows every client's file, format and entry).

A file we change is read strictly first (one we cannot read back exactly is left alone, and
the message says why), our entry is set in its text with every other byte kept
(``skupper_mcp.config_edit``), a copy is kept beside it with a timestamp, and it is
replaced atomically keeping its mode; a new file holding a client's configuration is 0600.
Every file is written through ``skupper_mcp.userfiles``: created exclusively with its final
mode, never through a link planted at its name; a link at the client's file is followed to
its target and said, or refused when it leads back into the current folder (a repository's
``.vscode/mcp.json``). Running it twice changes nothing the second time.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skupper_mcp import data, userfiles
from skupper_mcp.clients import (
    SERVER_NAME,
    Client,
    Format,
    Launch,
    Where,
    claude_mcp_add,
    claude_mcp_remove,
    client,
    launch,
    parse,
    snippet,
    updated,
)
from skupper_mcp.errors import ConfigError
from skupper_mcp.topology.discovery import find_topology_path

#: How long ``claude mcp add`` may take (it starts Node and rewrites its own file).
CLAUDE_TIMEOUT = 60.0
#: The largest configuration file we read: ~/.claude.json grows with project history.
MAX_CONFIG_BYTES = 16 * 1024 * 1024
PRIVATE_MODE = 0o600
PUBLIC_MODE = 0o644
SKILL_NAME = "skupper-mcp"


@dataclass(frozen=True)
class Written:
    """What a write did: the file, the backup of what it replaced (None when the file is
    new or unchanged), and whether anything changed."""

    path: Path
    backup: Path | None
    changed: bool
    #: the link that led to ``path`` (the client's file, or its directory), if one did
    link: Path | None = None


def this_installation() -> list[str]:
    """How this installation starts: the ``skupper-mcp`` console script beside the running
    interpreter (a venv's or pipx's bin), else that interpreter with ``-m skupper_mcp``.
    Not resolved through symlinks: a venv's python is a link out of the venv."""
    interpreter = Path(os.path.abspath(sys.executable))
    script = interpreter.parent / ("skupper-mcp.exe" if os.name == "nt" else "skupper-mcp")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(interpreter), "-m", "skupper_mcp"]


def topology_for_clients(explicit: str | None) -> Path:
    """The absolute topology path a client passes: the one the server would find now. It
    must exist: a client configured for a missing file only shows a failed server."""
    path = find_topology_path(explicit).expanduser().absolute()
    if not path.is_file():
        raise ConfigError(
            f"no topology at {path}; `skupper-mcp init {path}` writes one to start from"
        )
    return path


def here() -> Where:
    return Where(home=Path.home(), cwd=Path.cwd(), platform=sys.platform, environ=os.environ)


def read_bounded(path: Path, folder: Path | None = None) -> userfiles.Snapshot:
    """The file at ``path`` as it is now (its text None when there is none), bounded; a
    link is followed or refused as ``userfiles.target`` says."""
    return userfiles.read(path, limit=MAX_CONFIG_BYTES, folder=folder)


def write_file(before: userfiles.Snapshot, text: str, *, new_mode: int) -> Written:
    """``text`` into the file ``before`` was read from, atomically, the old content copied
    beside it first; the mode of an existing file is kept, a new one gets ``new_mode``.
    Unchanged content: no write."""
    if before.text == text:
        return Written(before.path, None, changed=False, link=before.link)
    backup = userfiles.write(before, text, new_mode=new_mode)
    return Written(before.path, backup, changed=True, link=before.link)


def _folder(target: Client, where: Where) -> Path | None:
    """The folder a workspace client's file must not lead back into through a link."""
    return where.cwd if target.workspace else None


def connect_file(target: Client, run: Launch, where: Where) -> Written:
    """Merge our entry into the client's configuration file."""
    assert target.path is not None
    before = read_bounded(target.path(where), _folder(target, where))
    text = updated(target, before.text, run, before.path)
    return write_file(before, text, new_mode=PRIVATE_MODE if target.private else PUBLIC_MODE)


def connect_with_claude(claude: str, run: Launch, where: Where) -> tuple[Written, str]:
    """``claude mcp add --scope user``: Claude Code writes its own file. Its file is backed
    up first; an existing entry of ours is removed first so that a rerun replaces it."""
    target = client("claude-code")
    assert target.path is not None
    before = read_bounded(target.path(where))
    if before.text is not None:
        servers = parse(target, before.text, before.path).get("mcpServers")
        if isinstance(servers, dict) and servers.get(SERVER_NAME) == target.entry(run):
            return Written(before.path, None, changed=False), "already configured"
    backup = None
    if before.text is not None:
        backup = userfiles.keep_copy(before)
    _run_claude([claude, *claude_mcp_remove()[1:]], check=False)
    added = _run_claude([claude, *claude_mcp_add(run)[1:]], check=True)
    return Written(before.path, backup, changed=True, link=before.link), added


def _run_claude(argv: list[str], *, check: bool) -> str:
    try:
        result = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=CLAUDE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ConfigError(f"`{' '.join(argv[:3])}` did not run: {error}") from error
    output = (result.stdout + result.stderr).strip()[-2000:]
    if check and result.returncode != 0:
        raise ConfigError(f"`{' '.join(argv[:3])}` failed ({result.returncode}): {output}")
    return output


@dataclass(frozen=True)
class Connected:
    """What ``connect`` did, for the CLI to say."""

    target: Client
    run: Launch
    written: Written | None
    #: what Claude Code's CLI said, when it was used
    claude_output: str | None = None


def connect(
    name: str,
    topology: str | None,
    *,
    where: Where | None = None,
    command: list[str] | None = None,
    use_claude_cli: bool = True,
) -> Connected:
    """Configure the client ``name`` to start this installation's server."""
    target = client(name)
    run = launch(command or this_installation(), topology_for_clients(topology))
    where = where or here()
    if target.format is Format.COMMAND:
        return Connected(target, run, None)
    claude = shutil.which("claude") if target.name == "claude-code" and use_claude_cli else None
    if claude:
        written, said = connect_with_claude(claude, run, where)
        return Connected(target, run, written, said)
    return Connected(target, run, connect_file(target, run, where))


def printed(name: str, topology: str | None, *, command: list[str] | None = None) -> str:
    """What ``connect --print`` shows (nothing is written)."""
    target = client(name)
    return snippet(target, launch(command or this_installation(), topology_for_clients(topology)))


def skill_dirs(where: Where | None = None) -> list[Path]:
    """Where the skill goes without --dir: ``~/.claude/skills``, Claude Code's personal
    skills (https://code.claude.com/docs/en/skills), which Goose reads too, first of its
    global locations (https://block.github.io/goose/docs/guides/context-engineering/using-skills)."""
    where = where or here()
    return [where.home / ".claude" / "skills"]


def install_skill(directory: Path | None = None) -> Written:
    """The packaged SKILL.md into ``DIR/skupper-mcp/SKILL.md`` (the skill's directory must
    carry its name)."""
    base = directory.expanduser() if directory else skill_dirs()[0]
    before = read_bounded(base / SKILL_NAME / data.SKILL)
    return write_file(before, data.skill(), new_mode=PUBLIC_MODE)


# The CLI verbs. Registered by skupper_mcp.cli; here so that cli.py only names them.

EXIT_OK = 0
EXIT_USAGE = 2


def add_verbs(verbs: Any) -> None:
    """``connect CLIENT [--print]`` and ``skill install [--dir DIR]`` on the CLI's subparsers."""
    from skupper_mcp.clients import CLIENTS

    connect_parser = verbs.add_parser(
        "connect",
        help="configure an MCP client to start this server",
        description="Write CLIENT's own configuration so that it starts this installation's "
        "server with this topology (the file is merged, never replaced wholesale, and "
        "backed up beside itself first), then say how to check it.",
    )
    connect_parser.add_argument(
        "client", choices=list(CLIENTS), metavar="CLIENT", help=f"one of: {', '.join(CLIENTS)}"
    )
    connect_parser.add_argument(
        "--print",
        action="store_true",
        dest="print_only",
        help="print the configuration instead of writing it",
    )
    connect_parser.add_argument(
        "--topology",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="the topology the client's server uses (default: the one skupper-mcp finds now)",
    )
    skill_parser = verbs.add_parser(
        "skill",
        help="install the agent skill (SKILL.md)",
        description="Install the packaged SKILL.md where Claude Code and Goose read skills.",
    )
    skill_verbs = skill_parser.add_subparsers(dest="skill_verb", metavar="ACTION", required=True)
    install = skill_verbs.add_parser(
        "install",
        help="write SKILL.md into ~/.claude/skills/skupper-mcp/ (or --dir)",
        description="Write the packaged SKILL.md into DIR/skupper-mcp/SKILL.md (default DIR: "
        "~/.claude/skills, read by Claude Code and Goose); an existing different file is "
        "backed up beside itself first.",
    )
    install.add_argument("--dir", type=Path, metavar="DIR", help="the skills directory")


def run_verb(args: argparse.Namespace) -> int:
    """Run ``connect`` or ``skill install``; ConfigError becomes exit 2 with its message."""
    try:
        if args.verb == "skill":
            _say_written(install_skill(args.dir), "the skill")
            return EXIT_OK
        if args.print_only:
            print(printed(args.client, args.topology), end="")
            return EXIT_OK
        _say_connected(connect(args.client, args.topology))
        return EXIT_OK
    except ConfigError as error:
        print(f"skupper-mcp: {error}", file=sys.stderr)
        return EXIT_USAGE


def _say_written(written: Written, what: str) -> None:
    if written.link is not None:
        print(f"{written.link} is a link: {what} is in the file it leads to, {written.path}")
    if not written.changed:
        print(f"{what} in {written.path} is already up to date; nothing changed")
        return
    print(f"wrote {what} to {written.path}")
    if written.backup is not None:
        print(f"the previous file is kept as {written.backup}")


def _say_connected(done: Connected) -> None:
    target = done.target
    if done.written is None:
        print(snippet(target, done.run), end="")
        print(f"(nothing to write for {target.title}: run the line above; {target.check})")
        return
    if done.claude_output is not None and not done.written.changed:
        print(f"Claude Code already has '{SERVER_NAME}' as below; nothing changed")
    elif done.claude_output is not None:
        print(
            f"added '{SERVER_NAME}' with Claude Code's CLI: {shlex.join(claude_mcp_add(done.run))}"
        )
        if done.written.backup is not None:
            print(f"{done.written.path} as it was before is kept as {done.written.backup}")
    else:
        _say_written(done.written, f"{target.title}'s configuration")
    print(f"{target.title} starts: {shlex.join(done.run.argv)}")
    print(f"check it: {target.check}")
