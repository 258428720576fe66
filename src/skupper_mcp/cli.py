"""The command-line front end: ``skupper-mcp [--topology PATH] [--json] VERB ...``.

With no verb it serves MCP over stdio (what agent configurations run). Verbs print human
tables (``--json``: the result model); progress goes to stderr as it happens.

Exit codes: 0 fine, 1 some site failed, 2 bad usage or configuration (nothing run),
3 nothing failed but something was skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skupper_mcp import __version__
from skupper_mcp.errors import ConfigError, SkupperMcpError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skupper_mcp.engine import Engine

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_SKIPPED = 3

log = logging.getLogger("skupper_mcp")

# What a terminal acts on instead of printing. Host text (log lines, command output in
# reasons and details) reaches the CLI's output, and a sequence in it could retitle or clear
# the terminal, or rewrite lines already shown. Each alternative is one pass of character
# classes (no nested repetition), so matching stays linear on any input.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: ESC [ params intermediates final
    r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC, DCS, SOS, PM, APC: to BEL, ST or line end
    r"|\x1b[ -/]*[0-~]?"  # any other escape sequence, or a lone ESC
)
# C0 except tab and newline, DEL and C1 (8-bit CSI, OSC...)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# JSON escapes C0 itself but leaves DEL and C1 raw
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")

# a verb's implementation: (engine, parsed arguments) -> (result, exit code, human text)
VerbRunner = Callable[["Engine", argparse.Namespace], Awaitable[tuple["BaseModel", int, str]]]
VERBS: dict[str, VerbRunner] = {}


def verb(name: str) -> Callable[[VerbRunner], VerbRunner]:
    """Register the function that runs a verb (the lifecycle verbs plug in the same way)."""

    def register(function: VerbRunner) -> VerbRunner:
        VERBS[name] = function
        return function

    return register


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


def _common_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--topology",
        default=default(None),
        metavar="PATH",
        help="topology.env (default: $SKUPPER_MCP_TOPOLOGY, ./topology.env, "
        "~/.config/skupper-mcp/topology.env)",
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
        "localhost. With no verb: serve MCP over stdio.",
    )
    parser.add_argument("--version", action="version", version=f"skupper-mcp {__version__}")
    _common_options(parser, suppress=False)
    _server_options(parser, suppress=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    shared = argparse.ArgumentParser(add_help=False)
    _common_options(shared, suppress=True)

    serve = verbs.add_parser("serve", parents=[shared], help="serve MCP (the default)")
    _server_options(serve, suppress=True)
    setup = verbs.add_parser(
        "setup", parents=[shared], help="one-time infrastructure build; --check: precheck only"
    )
    setup.add_argument("--check", action="store_true", help="only the topology and precheck")
    setup.add_argument("--plan", action="store_true", help="show what would change")
    resolve = verbs.add_parser(
        "resolve", parents=[shared], help="host, site or profile name -> host and profile"
    )
    resolve.add_argument("name", help="host (rhel-ai), site (hub-rhel-ai) or profile (g3b-16k)")
    sandbox = verbs.add_parser(
        "sandbox", help="the simulated VAN for tests and demos (see `sandbox --help`)"
    )
    sandbox.add_argument("args", nargs=argparse.REMAINDER)
    for name, summary in (
        ("up", "start the VAN (controllers, then routers) on TARGET"),
        ("down", "stop the VAN on TARGET (local only with the last provider)"),
    ):
        sub = verbs.add_parser(name, parents=[shared], help=summary)
        sub.add_argument("target", nargs="?", default="all", help=TARGET_HELP)
        sub.add_argument("--plan", action="store_true", help="show what would change")
    verbs.add_parser("status", parents=[shared], help="live state of sites, links, listeners")
    diagnose = verbs.add_parser(
        "diagnose", parents=[shared], help="what is wrong on each site, why, and what to do"
    )
    diagnose.add_argument("target", nargs="?", default="all", help=TARGET_HELP)
    test_model = verbs.add_parser(
        "test-model", parents=[shared], help="the six end-to-end checks of a model route"
    )
    test_model.add_argument("target", help="provider host (rhel-ai) or profile (g3b-16k)")
    logs = verbs.add_parser(
        "logs", parents=[shared], help="the newest lines of one site's router or controller log"
    )
    logs.add_argument("target", help="one site: a host, a site, a profile, local or crc")
    logs.add_argument(
        "--component", choices=["router", "controller"], default="router", help="(default: router)"
    )
    logs.add_argument("--lines", type=int, default=50, help="newest lines, 1-500 (default: 50)")
    teardown = verbs.add_parser(
        "teardown", parents=[shared], help="remove the Skupper infrastructure on every site"
    )
    teardown.add_argument("--plan", action="store_true", help="show what would be removed")
    teardown.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    return parser


TARGET_HELP = "all (default), a host, a site, a profile, local, or the Kubernetes site"


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences and control characters (tab and newline stay)."""
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def json_safe(document: str) -> str:
    """A JSON document with DEL and C1 escaped as the encoder escapes C0: the same data, and
    nothing a terminal acts on."""
    return _RAW_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", document)


def show(text: str, *, stream: TextIO | None = None, end: str = "\n") -> None:
    """The CLI's one way to print: everything it prints may carry host text."""
    print(terminal_safe(text), end=end, file=stream or sys.stdout, flush=True)


class TerminalSafeFormatter(logging.Formatter):
    """Log records can quote host text too."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def setup_logging(level: str) -> None:
    """Logs go to stderr only: stdout is the protocol (stdio) or the result (verbs)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TerminalSafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), handlers=[handler])


async def _progress(message: str) -> None:
    show(f"  {message}", stream=sys.stderr)


@verb("setup")
async def _setup(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.models import CheckResult
    from skupper_mcp.render import check_text

    result = await engine.setup(check=args.check, plan=args.plan, progress=_progress)
    if isinstance(result, CheckResult):
        return result, EXIT_OK if result.ok else EXIT_FAILED, check_text(result)
    return result, operation_exit_code(result), result.summary


@verb("up")
async def _up(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import operation_text

    result = await engine.up(args.target, plan=args.plan, progress=_progress)
    return result, operation_exit_code(result), operation_text(result)


@verb("down")
async def _down(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import operation_text

    result = await engine.down(args.target, plan=args.plan, progress=_progress)
    return result, operation_exit_code(result), operation_text(result)


@verb("status")
async def _status(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import status_text

    result = await engine.status()
    unread = any(not s.reachable or s.container is None for s in result.sites)
    return result, EXIT_SKIPPED if unread else EXIT_OK, status_text(result)


@verb("diagnose")
async def _diagnose(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import diagnose_text

    result = await engine.diagnose(args.target)
    return result, EXIT_OK if result.ok else EXIT_FAILED, diagnose_text(result)


@verb("test-model")
async def _test_model(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import test_model_text

    result = await engine.test_model(args.target)
    code = EXIT_OK if result.passed == result.total else EXIT_FAILED
    return result, code, test_model_text(result)


@verb("logs")
async def _logs(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    result = await engine.logs(args.target, args.component, args.lines)
    if not args.json:
        show(result.summary, stream=sys.stderr)
    if not result.found:
        return result, EXIT_SKIPPED, result.detail or result.summary
    return result, EXIT_OK, "\n".join(result.lines)


@verb("teardown")
async def _teardown(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import operation_text

    if not (args.plan or args.yes or _confirmed_on_terminal()):
        raise ConfigError(
            "teardown removes the Skupper sites, units and router containers on every host; "
            "run it on a terminal to be asked, or pass --yes (see the plan with --plan)"
        )
    result = await engine.teardown(plan=args.plan, progress=_progress)
    return result, operation_exit_code(result), operation_text(result)


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


@verb("resolve")
async def _resolve(engine: Engine, args: argparse.Namespace) -> tuple[BaseModel, int, str]:
    from skupper_mcp.render import resolve_text

    result = await engine.resolve(args.name)
    return result, EXIT_OK, resolve_text(result)


def operation_exit_code(result: Any) -> int:
    """0 fine, 1 a targeted site failed, 3 nothing failed but a site was skipped."""
    outcomes = {site.outcome for site in result.sites}
    if "failed" in outcomes or not result.ok:
        return EXIT_FAILED
    return EXIT_SKIPPED if "skipped" in outcomes else EXIT_OK


async def _run_verb(args: argparse.Namespace) -> int:
    from skupper_mcp.engine import Engine
    from skupper_mcp.topology import load_topology

    topology = load_topology(args.topology)
    async with Engine(topology) as engine:
        result, code, text = await VERBS[args.verb](engine, args)
    if args.json:
        show(json_safe(result.model_dump_json(indent=2, by_alias=True)))
    else:
        show(text)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skupper-mcp`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.log_level)
    if args.verb == "sandbox":
        from skupper_sandbox.cli import main as sandbox_main

        return int(sandbox_main(args.args) or 0)
    if args.verb in (None, "serve"):
        from skupper_mcp.server import serve

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
                )
        except ConfigError as error:
            show(f"skupper-mcp: {error}", stream=sys.stderr)
            return EXIT_USAGE
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
