"""The one table of tools that both fronts are built from.

Each tool is declared here once: its name and CLI verb, title, annotations, how the CLI
spells its arguments, the CLI's text rendering and exit code rule, and its typed async
function over the Engine (``functions``, under the tool's name): the MCP server registers
that function (its parameters, return annotation and docstring give the input schema, the
output schema and the description), the CLI calls it with the parsed arguments. ``server``
turns every entry into an MCP tool, ``cli`` into a verb; neither declares a tool of its own.

Nothing heavy is imported here: ``skupper-mcp --help`` reads this table, so the functions
(which import pydantic and the result models) are imported when a tool runs or the server
is built, and the renderers import ``render`` only when they run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skupper_mcp.results import (
        CheckResult,
        DiagnoseResult,
        HistoryResult,
        LogsResult,
        ModelsResult,
        OperationResult,
        ResolveResult,
        SetupResult,
        StatusResult,
        TestModelResult,
    )

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_SKIPPED = 3


class _Required:
    """The default of an argument that has none."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Argument:
    """How the CLI spells a parameter of a tool's function (the MCP input schema is the
    function's own): a bool is a ``--flag``, choices and an int are ``--name VALUE``
    options, a str is a positional (optional when it has a default). Its name, kind,
    default and choices are the function's (tests/test_tools.py holds them to it)."""

    name: str
    kind: type
    help: str
    default: Any = REQUIRED
    choices: tuple[str, ...] = ()
    option: bool = False  # the CLI spells a str as ``--name VALUE``, not as a positional

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Hints:
    """The MCP annotations of a tool; every tool reaches hosts outside this process."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = True


READS = Hints(read_only=True, destructive=False, idempotent=True)
BUILDS = Hints(read_only=False, destructive=False, idempotent=True)
STOPS = Hints(read_only=False, destructive=True, idempotent=True)
REMOVES = Hints(read_only=False, destructive=True, idempotent=False)


@dataclass(frozen=True)
class Tool:
    """One tool: what the MCP server registers and the CLI runs as a verb."""

    name: str  # the MCP tool's
    verb: str  # the CLI's
    title: str
    summary: str  # the CLI verb's one-line help
    arguments: tuple[Argument, ...]  # the CLI's spelling of the function's parameters
    hints: Hints
    render: Callable[[Any, int | None], str]  # the CLI's human text, at most so wide
    exit_code: Callable[[Any], int]  # the CLI's exit code
    notice: Callable[[Any], str] | None = None  # said on stderr first (the CLI, without --json)
    consent: bool = False  # only the user's yes runs it (a plan excepted); each front asks
    drawn: bool = False  # the VAN view draws its result: the MCP App's tool, the CLI's --html
    exported: bool = False  # its result exports as client configuration: the CLI's --export

    @property
    def read_only(self) -> bool:
        """Offered by a read-only server (and the CLI's ``--read-only`` serve)."""
        return self.hints.read_only

    @property
    def function(self) -> Callable[..., Awaitable[Any]]:
        """The tool's typed function: ``(engine, progress, **arguments) -> result``."""
        from skupper_mcp.tools import functions

        found: Callable[..., Awaitable[Any]] = getattr(functions, self.name)
        return found


def operation_exit_code(result: OperationResult) -> int:
    """0 fine, 1 a targeted site failed, 3 nothing failed but a site was skipped."""
    outcomes = {site.outcome for site in result.sites}
    if "failed" in outcomes or not result.ok:
        return EXIT_FAILED
    return EXIT_SKIPPED if "skipped" in outcomes else EXIT_OK


def _ok_exit_code(result: CheckResult | DiagnoseResult) -> int:
    return EXIT_OK if result.ok else EXIT_FAILED


def _setup_result(
    result: SetupResult | CheckResult | OperationResult,
) -> CheckResult | OperationResult:
    """What setup answered: a CheckResult or an OperationResult (its function's SetupResult
    holds one of them)."""
    from skupper_mcp.results import SetupResult

    return result.root if isinstance(result, SetupResult) else result


def _setup_exit_code(result: SetupResult | CheckResult | OperationResult) -> int:
    from skupper_mcp.results import CheckResult

    answered = _setup_result(result)
    if isinstance(answered, CheckResult):
        return _ok_exit_code(answered)
    return operation_exit_code(answered)


def _setup_text(result: SetupResult | CheckResult | OperationResult, width: int | None) -> str:
    from skupper_mcp.render import check_text, operation_text
    from skupper_mcp.results import CheckResult

    answered = _setup_result(result)
    # setup's plan and result print as up's, down's and teardown's do: the table on stdout
    return (
        check_text(answered, width)
        if isinstance(answered, CheckResult)
        else operation_text(answered, width)
    )


def _operation_text(result: OperationResult, width: int | None) -> str:
    from skupper_mcp.render import operation_text

    return operation_text(result, width)


def _resolve_text(result: ResolveResult, width: int | None) -> str:
    from skupper_mcp.render import resolve_text

    return resolve_text(result, width)


def _status_exit_code(result: StatusResult) -> int:
    unread = any(s.state in ("unreachable", "unknown") for s in result.sites)
    return EXIT_SKIPPED if unread else EXIT_OK


def _status_text(result: StatusResult, width: int | None) -> str:
    from skupper_mcp.render import status_text

    return status_text(result, width)


def _diagnose_text(result: DiagnoseResult, width: int | None) -> str:
    from skupper_mcp.render import diagnose_text

    return diagnose_text(result, width)


def _test_model_exit_code(result: TestModelResult) -> int:
    return EXIT_OK if result.passed == result.total else EXIT_FAILED


def _test_model_text(result: TestModelResult, width: int | None) -> str:
    from skupper_mcp.render import test_model_text

    return test_model_text(result, width)


def _models_text(result: ModelsResult, width: int | None) -> str:
    from skupper_mcp.render import models_text

    return models_text(result, width)


def _models_exit_code(result: ModelsResult) -> int:
    """0 when every row serves, 3 when some do not (nothing failed: a catalog is a read)."""
    return EXIT_OK if all(r.state == "serving" for r in result.rows) else EXIT_SKIPPED


def _logs_exit_code(result: LogsResult) -> int:
    return EXIT_OK if result.found else EXIT_SKIPPED


def _logs_text(result: LogsResult, _width: int | None) -> str:
    # the log's own lines, never wrapped: they are read (and grepped) as the router wrote them
    if not result.found:
        return result.detail or result.summary
    return "\n".join(result.lines)


def _logs_summary(result: LogsResult) -> str:
    return result.summary


def _always_ok(_result: ResolveResult | HistoryResult) -> int:
    return EXIT_OK


def _history_text(result: HistoryResult, width: int | None) -> str:
    from skupper_mcp.render import history_text

    return history_text(result, width)


TARGET_HELP = "all (default), a host, a site, a profile, local, or the Kubernetes site"


def _target() -> Argument:
    return Argument("target", str, TARGET_HELP, "all")


def _plan(help: str = "show what would change") -> Argument:
    return Argument("plan", bool, help, False)


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="setup",
        verb="setup",
        title="Set up Skupper",
        summary="one-time infrastructure build; --check: precheck only",
        arguments=(Argument("check", bool, "only the topology and precheck", False), _plan()),
        hints=BUILDS,
        render=_setup_text,
        exit_code=_setup_exit_code,
        drawn=True,
    ),
    Tool(
        name="resolve_profile",
        verb="resolve",
        title="Resolve a name to its host and profile",
        summary="host, site or profile name -> host and profile",
        arguments=(
            Argument("name", str, "a host, site or profile (e.g. gpu1, hub-gpu1, small-16k)"),
        ),
        hints=READS,
        render=_resolve_text,
        exit_code=_always_ok,
    ),
    Tool(
        name="up",
        verb="up",
        title="Start Skupper",
        summary="start the VAN (controllers, then routers) on TARGET",
        arguments=(_target(), _plan()),
        hints=BUILDS,
        render=_operation_text,
        exit_code=operation_exit_code,
        drawn=True,
    ),
    Tool(
        name="down",
        verb="down",
        title="Stop Skupper",
        summary="stop the VAN on TARGET (local only with the last provider)",
        arguments=(_target(), _plan()),
        hints=STOPS,
        render=_operation_text,
        exit_code=operation_exit_code,
        drawn=True,
    ),
    Tool(
        name="status",
        verb="status",
        title="Skupper status",
        summary="live state of sites, links, listeners; --readiness: each model's too",
        arguments=(
            Argument("readiness", bool, "also read each model's readiness and load", False),
        ),
        hints=READS,
        render=_status_text,
        exit_code=_status_exit_code,
        drawn=True,
    ),
    Tool(
        name="models",
        verb="models",
        title="Models on this machine",
        summary="every model the VAN brings here: ids, URLs, state; --export for clients",
        arguments=(),
        hints=READS,
        render=_models_text,
        exit_code=_models_exit_code,
        exported=True,
    ),
    Tool(
        name="diagnose",
        verb="diagnose",
        title="Diagnose Skupper",
        summary="what is wrong on each site, why, and what to do",
        arguments=(_target(),),
        hints=READS,
        render=_diagnose_text,
        exit_code=_ok_exit_code,
        drawn=True,
    ),
    Tool(
        name="test_model",
        verb="test-model",
        title="Test a model route end to end",
        summary="the six end-to-end checks of a model route",
        arguments=(
            Argument(
                "target",
                str,
                "a provider host, its site, a profile or a model pool (e.g. gpu1 or small-16k)",
            ),
        ),
        hints=READS,
        render=_test_model_text,
        exit_code=_test_model_exit_code,
    ),
    Tool(
        name="logs",
        verb="logs",
        title="Read a site's Skupper log",
        summary="the newest lines of one site's router or controller log",
        arguments=(
            Argument(
                "target", str, "one site: a host, a site, a profile, local or the Kubernetes site"
            ),
            Argument(
                "component",
                str,
                "(default: router)",
                "router",
                choices=("router", "controller"),  # results.LogComponent
            ),
            Argument("lines", int, "newest lines, 1-500 (default: 50)", 50),
        ),
        hints=READS,
        render=_logs_text,
        exit_code=_logs_exit_code,
        notice=_logs_summary,
    ),
    Tool(
        name="history",
        verb="history",
        title="What the agent changed",
        summary="the writes recorded in the operations journal",
        arguments=(
            Argument(
                "since",
                str,
                "only writes since DURATION (30m, 12h, 7d) or an ISO time",
                "",
                option=True,
            ),
        ),
        hints=READS,
        render=_history_text,
        exit_code=_always_ok,
    ),
    Tool(
        name="teardown",
        verb="teardown",
        title="Tear down Skupper",
        summary="remove the Skupper infrastructure on every site",
        arguments=(_plan("show what would be removed"),),
        hints=REMOVES,
        render=_operation_text,
        exit_code=operation_exit_code,
        consent=True,
    ),
)
