"""The command-line front end: ``skupper-mcp [--topology PATH] [--json] VERB ...``.

With no verb it serves MCP over stdio (what agent configurations run). Verbs print human
tables (``--json``: the result model); progress goes to stderr as it happens. Each verb is
also accepted under its MCP tool's name (``resolve-profile``, ``test_model``).

Tables fit the terminal: on a terminal they are at most its width (``COLUMNS`` overrides),
long cells wrapping within their column, or each row a block of lines when the columns
cannot fit. Into a pipe or a file they are as wide as their rows (one line per row, for grep)
unless ``COLUMNS`` is set.

Exit codes: 0 fine, 1 some site failed, 2 bad usage or configuration (nothing run),
3 nothing failed but something was skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import shutil
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skupper_mcp import __version__
from skupper_mcp.errors import ConfigError, SkupperMcpError
from skupper_mcp.http_sessions import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE,
    IDLE_VARIABLE,
    SESSIONS_VARIABLE,
)
from skupper_mcp.naming import sentence
from skupper_mcp.safe_text import safe_text
from skupper_mcp.tools import EXIT_FAILED, EXIT_OK, EXIT_USAGE, TOOLS, Argument, Tool

if TYPE_CHECKING:
    from skupper_mcp.exports import ExportContext

log = logging.getLogger("skupper_mcp")

# JSON escapes C0 itself but leaves DEL, C1 and the bidi controls raw
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def aliases(tool: Tool) -> list[str]:
    """The other spellings of a tool's verb: its MCP name, with underscores or dashes."""
    spellings = dict.fromkeys([tool.name.replace("_", "-"), tool.name])
    return [name for name in spellings if name != tool.verb]


# the verbs that run a tool of the table, under every spelling argparse may report
VERBS: dict[str, Tool] = {name: tool for tool in TOOLS for name in [tool.verb, *aliases(tool)]}

STDIO_HINT = (
    "skupper-mcp: MCP server on stdio, waiting for a client (Ctrl-C to stop); "
    "for the command line see skupper-mcp --help"
)


def _server_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--read-only",
        action="store_true",
        default=default(False),
        help="register only read-only tools",
    )
    parser.add_argument(
        "--transport",
        choices=["stdio", "streamable-http"],
        default=default("stdio"),
        help="MCP transport (default: stdio)",
    )
    parser.add_argument(
        "--host", default=default("127.0.0.1"), help="HTTP address (streamable-http)"
    )
    parser.add_argument(
        "--port", type=int, default=default(8765), help="HTTP port (streamable-http)"
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        default=default(None),
        metavar="PATH",
        help="file holding the bearer token HTTP clients must send (streamable-http; "
        "default: $SKUPPER_MCP_HTTP_TOKEN, else one generated in STATE_DIR/http-token)",
    )
    parser.add_argument(
        "--insecure-no-auth-on-loopback",
        action="store_true",
        default=default(False),
        help="serve HTTP on loopback WITHOUT a token, for clients that cannot send a header: "
        "any local process can then call every tool, teardown included",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=default(None),
        metavar="N",
        help="HTTP sessions the token may hold open at once; past it a new one gets 503 "
        f"(streamable-http; default: ${SESSIONS_VARIABLE}, else {DEFAULT_MAX_SESSIONS})",
    )
    parser.add_argument(
        "--session-idle-timeout",
        type=float,
        default=default(None),
        metavar="SECONDS",
        help="close an HTTP session after this long without a request (streamable-http; "
        f"default: ${IDLE_VARIABLE}, else {DEFAULT_SESSION_IDLE:g})",
    )


def _common_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--topology",
        default=default(None),
        metavar="PATH",
        help="topology.env (default: $SKUPPER_MCP_TOPOLOGY, else "
        "~/.config/skupper-mcp/topology.env; a ./topology.env is read only when named: "
        "--topology ./topology.env)",
    )
    parser.add_argument(
        "--json", action="store_true", default=default(False), help="print the result as JSON"
    )
    parser.add_argument(
        "--log-level",
        default=default("WARNING"),
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        type=str.upper,
        help="stderr log level (default: WARNING)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; verbs added by other modules go through ``add_verb_parser``."""
    parser = argparse.ArgumentParser(
        prog="skupper-mcp",
        description="Control a Skupper V2 network that brings remote GPU-hosted models to "
        "localhost. With no verb: serve MCP over stdio. Tables fit the terminal (COLUMNS "
        "sets the width; into a pipe each row stays on one line).",
    )
    parser.add_argument("--version", action="version", version=f"skupper-mcp {__version__}")
    _common_options(parser, suppress=False)
    _server_options(parser, suppress=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    shared = argparse.ArgumentParser(add_help=False)
    _common_options(shared, suppress=True)

    serve = verbs.add_parser(
        "serve",
        parents=[shared],
        help="serve MCP (the default)",
        description="Serve MCP to an agent: over stdio (the default, what agent "
        "configurations run) or Streamable HTTP.",
    )
    _server_options(serve, suppress=True)
    _add_init(verbs)  # a stranger's first command, listed first
    from skupper_mcp.connect import add_verbs as add_connect_verbs

    add_connect_verbs(verbs)  # connect CLIENT, skill install: local files, no host
    for tool in TOOLS:
        _add_verb(verbs, tool, shared)
    return parser


def _add_init(verbs: Any) -> None:
    """``init``: not a tool (it writes a local file and reaches no host)."""
    init = verbs.add_parser(
        "init",
        help="write a commented topology.env to start from",
        description="Write a commented topology.env to start from: fill in its placeholders, "
        "then run `skupper-mcp setup --check`.",
    )
    init.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="where to write it (default: $SKUPPER_MCP_TOPOLOGY, else "
        "~/.config/skupper-mcp/topology.env, where the server looks)",
    )
    init.add_argument("--force", action="store_true", help="replace an existing file")


def _init(args: argparse.Namespace) -> int:
    from skupper_mcp.topology import find_topology_path
    from skupper_mcp.topology.starter import default_init_path, write_starter

    written = write_starter(Path(args.path) if args.path else default_init_path(), force=args.force)
    show(f"wrote {written}")
    try:
        found = find_topology_path().resolve() == written.resolve()
    except ConfigError:
        found = False
    # the file every verb finds by itself needs no --topology; any other does
    where = "" if found else f" --topology {written}"
    show(
        "next: replace its placeholders (*.example.com, 203.0.113.x), then run "
        f"`skupper-mcp{where} setup --check`"
    )
    return EXIT_OK


def _add_verb(verbs: Any, tool: Tool, shared: argparse.ArgumentParser) -> None:
    """A tool of the table as a verb; one that needs consent also takes --yes."""
    parser = verbs.add_parser(
        tool.verb,
        aliases=aliases(tool),
        parents=[shared],
        help=tool.summary,
        description=f"{sentence(tool.summary)} (the MCP tool {tool.name}: {tool.title}).",
    )
    for argument in tool.arguments:
        _add_argument(parser, argument)
    if tool.consent:
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    if tool.exported:
        from skupper_mcp.vocabulary import EXPORT_FORMATS

        parser.add_argument(
            "--export",
            choices=EXPORT_FORMATS,
            metavar="FORMAT",
            help=f"print configuration for a client instead: {', '.join(EXPORT_FORMATS)} "
            "(serving models only; keys only as references to their variables or files; "
            "exits 0 once written, each row's state on stderr)",
        )
        parser.add_argument(
            "--output",
            type=Path,
            metavar="FILE",
            help="with --export: write it to FILE (goose: a directory, one file per provider)",
        )
        parser.add_argument(
            "--all",
            action="store_true",
            help="with --export: every model, not only serving (commented where the format "
            "has comments)",
        )
    if tool.drawn:
        parser.add_argument(
            "--html",
            type=Path,
            metavar="FILE",
            help="write the result as a picture of the VAN: one HTML file that loads nothing",
        )


def _add_argument(parser: argparse.ArgumentParser, argument: Argument) -> None:
    """An argument of the table as the CLI spells it: a bool is a flag, choices and an int
    are options that take a value, a str is positional (optional when it has a default)."""
    flag = f"--{argument.name}"
    if argument.kind is bool:
        parser.add_argument(flag, action="store_true", help=argument.help)
    elif argument.choices:
        choices = list(argument.choices)
        parser.add_argument(flag, choices=choices, default=argument.default, help=argument.help)
    elif argument.option:
        parser.add_argument(flag, default=argument.default, help=argument.help)
    elif argument.kind is int:
        parser.add_argument(flag, type=int, default=argument.default, help=argument.help)
    elif argument.required:
        parser.add_argument(argument.name, help=argument.help)
    else:
        parser.add_argument(argument.name, nargs="?", default=argument.default, help=argument.help)


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences, control and bidi characters (tab and newline
    stay) and with no lone surrogate, which would fail the print itself. Host text (log
    lines, command output in reasons and details, error messages) reaches the CLI's output:
    the cleaner results are made with (safe_text) is what every print goes through."""
    return safe_text(text)


def json_safe(document: str) -> str:
    """A JSON document with DEL, C1 and the bidi controls escaped as the encoder escapes C0:
    the same data, and nothing a terminal acts on or reads the other way round. (A result
    holds none of them: results.Result takes them out; this is for any other document.)"""
    return _RAW_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", document)


def show(text: str, *, stream: TextIO | None = None, end: str = "\n") -> None:
    """The CLI's one way to print: everything it prints may carry host text."""
    print(terminal_safe(text), end=end, file=stream or sys.stdout, flush=True)


class TerminalSafeFormatter(logging.Formatter):
    """Log records can quote host text too."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def setup_logging(level: str) -> None:
    """Logs go to stderr only: stdout is the protocol (stdio) or the result (verbs). A
    library's warnings go to the log at DEBUG (``--log-level DEBUG`` shows them): asyncssh's
    import alone warns ten times (``CryptographyDeprecationWarning: DSA is deprecated``),
    which no user of a verb caused or can act on."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TerminalSafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), handlers=[handler])
    warnings.showwarning = _warning_to_log


def _warning_to_log(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    text = warnings.formatwarning(message, category, filename, lineno, line).rstrip()
    logging.getLogger("py.warnings").debug("%s", text)


async def _progress(message: str) -> None:
    show(f"  {message}", stream=sys.stderr)


def _confirmed_on_terminal() -> bool:
    """Ask on the terminal; False when there is none (scripts must pass --yes)."""
    if not sys.stdin.isatty():
        return False
    show(
        "This removes the Skupper sites, units and router containers on every host\n"
        "(each site's inputs and CA are backed up locally first). Type 'yes' to go on: ",
        end="",
        stream=sys.stderr,
    )
    answer = sys.stdin.readline().strip().lower()
    if answer != "yes":
        raise ConfigError("teardown not confirmed; nothing was removed")
    return True


def output_width() -> int | None:
    """How wide tables may be: the terminal's width (COLUMNS overrides), or for a pipe
    COLUMNS when set, else no limit (see the module's doc)."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


async def _run_verb(args: argparse.Namespace) -> int:
    from skupper_mcp.engine import Engine
    from skupper_mcp.engine.store.statedir import check_state_dir
    from skupper_mcp.topology import load_topology

    tool = VERBS[args.verb]
    export = getattr(args, "export", None)
    if export is None and (getattr(args, "output", None) or getattr(args, "all", False)):
        raise ConfigError("--output and --all go with --export FORMAT")
    if export is not None and args.json:
        raise ConfigError("--export prints a client's configuration: it does not take --json")
    if export == "goose" and args.output is None:
        raise ConfigError(
            "--export goose writes one file per provider: give --output DIR "
            "(Goose reads ~/.config/goose/custom_providers)"
        )
    topology = load_topology(args.topology)
    check_state_dir(topology.state_dir)  # as serve does, in either transport
    async with Engine(topology) as engine:
        if tool.consent and not (args.plan or args.yes or _confirmed_on_terminal()):
            raise ConfigError(
                f"{tool.verb} removes the Skupper sites, units and router containers on every "
                "host; run it on a terminal to be asked, or pass --yes (see the plan with --plan)"
            )
        # the tool's typed function, as the MCP server runs it, with the parsed arguments
        arguments = {argument.name: getattr(args, argument.name) for argument in tool.arguments}
        result = await tool.function(engine, _progress, **arguments)
        if tool.notice is not None and not args.json:
            show(tool.notice(result), stream=sys.stderr)
        code, text = tool.exit_code(result), tool.render(result, output_width())
    if export is not None:
        write_export(
            result, export, include_all=args.all, path=args.output, context=export_context(topology)
        )
        return EXIT_OK  # the file is written; each row's state is in it and on stderr
    elif getattr(args, "html", None) is not None:
        write_html(args.html, tool.name, result)
    elif args.json:
        show(json_safe(result.model_dump_json(indent=2, by_alias=True)))
    else:
        show(text)
    return code


def write_export(
    result: Any,
    fmt: str,
    *,
    include_all: bool,
    path: Path | None,
    context: ExportContext | None = None,
) -> None:
    """``models --export``: the configuration on stdout, or in ``path`` (a directory of
    files for goose; 0600 when it names a key's variable or file: whoever reads it learns
    where the key is). Each row's state, whatever was left out and why, and the variables a
    client must set are said on stderr."""
    from skupper_mcp.exports import DIRECTORY_FORMATS, build_export

    export = build_export(result.rows, fmt, include_all, context)
    keys = export.keys
    if fmt in DIRECTORY_FORMATS:
        assert path is not None  # _run_verb asks for --output DIR first
        _write_directory(path, export.files, private=bool(keys))
        names = ", ".join(sorted(export.files)) or "no file"
        show(f"wrote {names} in {path}", stream=sys.stderr)
    elif path is None:
        show(export.text, end="")
    else:
        written = _write_private(path, export.text, private=bool(keys))
        show(
            f"wrote {_named(path, written)} ({len(export.entries)} model row(s))",
            stream=sys.stderr,
        )
    for row in result.rows:
        show(terminal_safe(f"{row.host}: {row.state}"), stream=sys.stderr)
    for note in export.left_out:
        show(terminal_safe(note.said()), stream=sys.stderr)
    if not any(e.live for e in export.entries):
        show(
            "no model is serving: nothing live exported (see `skupper-mcp models`)",
            stream=sys.stderr,
        )
    for name in keys:
        source = context.key_files.get(name) if context else None
        where = f" (the key in {source})" if source is not None else ""
        show(f"the configuration reads a model API key from ${name}{where}", stream=sys.stderr)
    if fmt == "litellm":
        show(
            "the LiteLLM proxy reads its master key from $LITELLM_MASTER_KEY: "
            "export LITELLM_MASTER_KEY=sk-<a secret of your own> before litellm --config",
            stream=sys.stderr,
        )


def export_context(topology: Any) -> ExportContext:
    """What an export needs of the topology: each key variable's file, each row's profiles
    (a pool's: its members' profiles)."""
    from skupper_mcp.engine.model_http import key_env
    from skupper_mcp.exports import ExportContext

    key_files = {}
    profiles: dict[str, dict[str, str]] = {}
    for p in topology.model_endpoints():  # a row per model endpoint, named by its label
        name = key_env(p)
        if name is not None and p.model_api_key_file is not None:
            key_files[name] = p.model_api_key_file
        profiles[p.label] = dict(p.profiles)
    for pool in topology.pools:
        profiles[pool.name] = {
            m.profile: topology.provider(m.provider).profiles[m.profile] for m in pool.members
        }
    return ExportContext(key_files=key_files, profiles=profiles)


def _write_directory(path: Path, files: dict[str, str], *, private: bool) -> None:
    """Each of ``files`` into the directory ``path`` (made if missing)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot make {path}: {error.strerror or error}") from error
    if not path.is_dir():
        raise ConfigError(f"{path} is not a directory: --export goose writes one file per provider")
    for name, text in files.items():
        _write_private(path / name, text, private=private)


def _write_private(path: Path, text: str, *, private: bool) -> Path:
    """``text`` into ``path``; with ``private`` the file is (and stays) 0600. The file
    written: a link's target when ``path`` is a link."""
    from skupper_mcp.userfiles import replace

    return replace(
        path, text, new_mode=0o600 if private else 0o644, mode=0o600 if private else None
    )


def _named(path: Path, written: Path) -> str:
    """``path`` as the user named it, and where a link there led the write."""
    if written == Path(os.path.abspath(path)):
        return str(path)
    return f"{written} (through the link {path})"


def write_html(path: Path, name: str, result: Any) -> None:
    """The VAN view of ``result`` (what the tool ``name`` answered) in the file ``path``."""
    from skupper_mcp.userfiles import replace
    from skupper_mcp.view import page_html

    written = replace(path, page_html({name: result}), new_mode=0o644)
    show(f"wrote {_named(path, written)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skupper-mcp`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.log_level)
    if args.verb == "init":
        try:
            return _init(args)
        except ConfigError as error:
            show(f"skupper-mcp: {error}", stream=sys.stderr)
            return EXIT_USAGE
    if args.verb in ("connect", "skill"):
        from skupper_mcp.connect import run_verb

        return run_verb(args)
    if args.verb in (None, "serve"):
        from skupper_mcp.server import serve

        if args.transport == "stdio" and sys.stdin.isatty():
            # someone typed the bare command: say what it waits for instead of hanging silently
            show(STDIO_HINT, stream=sys.stderr)
        try:
            with contextlib.suppress(KeyboardInterrupt):
                serve(
                    args.topology,
                    read_only=args.read_only,
                    transport=args.transport,
                    host=args.host,
                    port=args.port,
                    token_file=args.token_file,
                    no_auth=args.insecure_no_auth_on_loopback,
                    max_sessions=args.max_sessions,
                    session_idle_timeout=args.session_idle_timeout,
                )
        except ConfigError as error:
            show(f"skupper-mcp: {error}", stream=sys.stderr)
            return EXIT_USAGE
        except SkupperMcpError as error:  # a STATE_DIR that is not ours: as a verb says it
            show(f"skupper-mcp: {error}", stream=sys.stderr)
            return EXIT_FAILED
        return EXIT_OK
    try:
        return asyncio.run(_run_verb(args))
    except ConfigError as error:
        show(f"skupper-mcp: {error}", stream=sys.stderr)
        return EXIT_USAGE
    except SkupperMcpError as error:
        show(f"skupper-mcp: {error}", stream=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
