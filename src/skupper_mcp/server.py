"""The MCP front end: tools and resources over one Engine that lives as long as the server.

Tools only translate arguments and errors; the Engine does the work. Nothing is written to
stdout here (stdio carries the protocol); logs go to stderr.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from skupper_mcp import __version__
from skupper_mcp.engine import Engine
from skupper_mcp.errors import ConfigError, SkupperMcpError
from skupper_mcp.models import ResolveResult, SetupResult
from skupper_mcp.render import topology_markdown
from skupper_mcp.topology import Topology, load_topology

log = logging.getLogger(__name__)

Transport = Literal["stdio", "streamable-http"]
T = TypeVar("T")

INSTRUCTIONS = """\
Controls a Skupper V2 network (VAN) that brings LLM model APIs on remote GPU hosts to \
localhost and to a Kubernetes cluster. Names: a host (rhel-ai), its Skupper site \
(hub-rhel-ai), a profile (g3b-16k: a model configuration a provider can serve), `local` \
and the Kubernetes site (`crc`). Read the resource skupper://topology for the layout. \
This server never starts or stops model containers: results list `model_actions` for the \
hosted-model-ctl skill, which takes profile names (use resolve_profile to turn a host into \
its profile). Run setup with check=true before a first setup."""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
SETUP = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


@dataclass
class ServerState:
    """What the lifespan holds: the engine, or why the topology could not be loaded."""

    engine: Engine | None
    config_error: ConfigError | None

    def require_engine(self) -> Engine:
        if self.engine is None:
            assert self.config_error is not None
            raise ToolError(
                f"the topology is not usable: {self.config_error}. Fix topology.env "
                "(see topology.env.example) and restart the server."
            )
        return self.engine


def _load(topology_path: str | Path | None) -> tuple[Topology | None, ConfigError | None]:
    try:
        return load_topology(topology_path), None
    except ConfigError as error:
        log.error("topology: %s", error)
        return None, error


def build_server(topology_path: str | Path | None = None, *, read_only: bool = False) -> MCPServer:
    """The MCP server for a topology file (found the usual way when None).

    The topology is read when the server starts; a bad one does not stop the server, but
    every tool then answers with the configuration error so the agent can tell the user.
    """

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[ServerState]:
        topology, error = _load(topology_path)
        engine = Engine(topology) if topology else None
        try:
            yield ServerState(engine, error)
        finally:
            if engine is not None:
                await engine.close()

    server = MCPServer(
        "skupper-mcp", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan
    )

    def state(ctx: Context) -> ServerState:
        value = ctx.request_context.lifespan_context
        assert isinstance(value, ServerState)
        return value

    async def run(call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except ConfigError as error:
            raise ToolError(str(error)) from error
        except NotImplementedError as error:
            raise ToolError(f"{error}; upgrade skupper-mcp to get it") from error
        except SkupperMcpError as error:
            raise ToolError(f"{error}. Check the host, then try again.") from error

    async def resolve_profile(
        name: Annotated[
            str,
            Field(
                description="A host (rhel-ai), a site (hub-rhel-ai), a profile (g3b-16k), "
                "'local' or the Kubernetes site (crc)",
                min_length=1,
                max_length=253,
            ),
        ],
        ctx: Context,
    ) -> ResolveResult:
        """Find what a name refers to: its host, Skupper site, role (provider or consumer)
        and, for a provider, the profile to pass to hosted-model-ctl (the one it serves now,
        else its default). Use it before starting or stopping a model on a host, because
        hosted-model-ctl takes profile names, not host names."""
        engine = state(ctx).require_engine()
        return await run(lambda: engine.resolve(name))

    async def setup(
        ctx: Context,
        check: Annotated[
            bool,
            Field(description="Only run the precheck and show the topology; change nothing"),
        ] = False,
        plan: Annotated[
            bool,
            Field(description="Return what setup would do, without changing anything"),
        ] = False,
    ) -> SetupResult:
        """One-time, idempotent build of the Skupper infrastructure on every site. With
        check=true it only shows the topology diagram and runs the precheck (SSH, podman,
        skupper version, systemd --user, DNS, certificate SANs, local ports, Kubernetes
        access) and returns a CheckResult; use that first, and when the user asks to check
        the setup. Otherwise it returns an OperationResult with the model_actions to run."""
        engine = state(ctx).require_engine()

        done = 0

        async def report(message: str) -> None:
            nonlocal done
            done += 1
            await ctx.report_progress(done, None, message)

        result = await run(lambda: engine.setup(check=check, plan=plan, progress=report))
        return SetupResult(result)

    def add(function: Callable[..., Any], annotations: ToolAnnotations) -> None:
        description = inspect.cleandoc(function.__doc__ or "")
        server.add_tool(function, description=description, annotations=annotations)

    add(resolve_profile, READ_ONLY)
    if not read_only:
        add(setup, SETUP)

    @server.resource(
        "skupper://topology",
        name="topology",
        description="The VAN diagram with real values, its sites and its routing",
        mime_type="text/markdown",
    )
    def topology_resource() -> str:
        topology, error = _load(topology_path)
        if topology is None:
            return f"# Skupper VAN topology\n\nThe topology is not usable: {error}\n"
        return topology_markdown(topology)

    @server.resource(
        "skupper://topology.json",
        name="topology.json",
        description="The parsed topology.env as JSON",
        mime_type="application/json",
    )
    def topology_json() -> str:
        topology, error = _load(topology_path)
        if topology is None:
            return json.dumps({"error": str(error)})
        return topology.model_dump_json(indent=2)

    return server


def tool_names(server: MCPServer) -> list[str]:
    """Names of the registered tools (for tests and logs)."""
    return [tool.name for tool in server._tool_manager.list_tools()]


def serve(
    topology_path: str | None = None,
    *,
    read_only: bool = False,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
) -> None:
    """Run the server until the client goes away (stdio) or the process is stopped."""
    server = build_server(topology_path, read_only=read_only)
    kwargs: dict[str, Any] = {}
    if transport == "streamable-http":
        kwargs = {"host": host, "port": port}
    log.info("skupper-mcp %s serving over %s", __version__, transport)
    server.run(transport, **kwargs)
