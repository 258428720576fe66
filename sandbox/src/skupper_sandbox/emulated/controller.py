"""The emulated system-controller: the network-status collector of every namespace.

Runs as the process of the ``<user>-skupper-controller`` container. For each rendered
namespace it reads the router container's state and the router's management answer and
writes live status into ``runtime/resources``. While it is not running nothing updates, so
status goes stale (as on a real host).

On a real-podman host the controller runs in a real container and its routers' containers
are podman's: it asks the host's podman API socket about them and follows their output
through it (``router_containers``, ``router_news``).

The real controller is told, not polling: a receiver on the router's ``mc/sfe.all`` says
whether the router is up, and the flow collector's records say what changed
(``internal/nonkube/controller/router_state_handler.go@2.1.2``). The emulation is woken the
same way, by what changes: inotify on the namespaces' directories, the router container's
state and its log (the router logs every connection, topology change and listener it
binds; its flow records, one for every connection through it, are no news). Woken, it asks
the router at once, then after 0.5, 1, 2, 4 and 8 seconds while the answers stay the same
(sooner again when they change), then every IDLE_QUERY_SECONDS. Like the real controller
it keeps one management connection per router (reopened when the router restarts), and it
parses a resource file again only when the file changed.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import hostenv, multikey
from ..router import choice as router_choice
from ..router.seam import Management
from . import dirwatch, router_containers
from .skupper import render
from .skupper import resources as res
from .skupper.failure import CliFailure
from .skupper.paths import NamespacePaths, namespaces

MANAGEMENT_PORT = 5671
#: Where the controller container has the host's Skupper data home.
OUTPUT = "/output"
#: After a change the router is asked again after FIRST_QUERY_SECONDS, then at doubling
#: intervals up to SETTLE_QUERY_SECONDS while its answers stay the same (a link's peer names
#: its site a second or so after the connection opens, unlogged); then, with nothing to
#: wake it, every IDLE_QUERY_SECONDS (a backstop: a query costs ~25 ms of CPU here, and the
#: router's too).
FIRST_QUERY_SECONDS = 0.5
SETTLE_QUERY_SECONDS = 8.0
IDLE_QUERY_SECONDS = 60.0
#: How often a kept management connection runs its I/O between queries: AMQP heartbeats
#: every 8 s or so keep the router from dropping it as idle.
KEEPALIVE_SECONDS = 3.0
NETWORK_STATUS = "skupper-network-status"
LOCAL_CLIENT_CERT = "skupper-local-client"
Cond, Status = res.Condition, res.Status


def data_home(env: Mapping[str, str]) -> Path:
    """The data home as the container sees it: the ``/output`` mount (SKUPPER_OUTPUT_PATH
    names the same directory on the host), else HOME's. In an emulated container the mount
    is a translation (``SKMCP_SANDBOX_MOUNTS``); in a real one (a real-podman host)
    ``/output`` is podman's bind mount, read as the real controller reads it."""
    mounted = hostenv.container_path(OUTPUT, env)
    if mounted != Path(OUTPUT):
        return mounted
    if hostenv.MOUNTS_VAR not in env and Path(OUTPUT).is_dir():
        return Path(OUTPUT)
    return Path(env["HOME"]) / ".local" / "share" / "skupper"


def query_router(
    address: str,
    port: int = MANAGEMENT_PORT,
    timeout: float = 2.0,
    *,
    client_cert: Path | None = None,
    world_dir: str | None = None,
) -> Any:
    """The router's management answer, or None when it does not answer in time.

    As the real controller does, over AMQP management with the namespace's
    ``skupper-local-client`` certificate when the world runs the real router."""
    world = world_dir or hostenv.current_host().world_dir
    return router_choice.for_world(world).query(address, port, client_cert, timeout)


def live_statuses(
    runtime: list[res.Resource],
    router_running: bool,
    answer: dict[str, Any] | None,
    sets_running: bool = True,
) -> list[res.Resource]:
    """The runtime resources with status derived from the router's state (pure).

    ``sets_running`` is false for the 2.1.0 controller, which never changes the Site's
    Running condition (SetRunning came with 2.1.1): the render's "Ready" stays."""
    stamp = res.now()
    links = {link.get("name"): link for link in (answer or {}).get("links") or []}
    reachable = (answer or {}).get("reachable") or {}
    listeners = (answer or {}).get("listeners") or []
    sites_in_network = (answer or {}).get("sites") or []
    peers = bool((answer or {}).get("accepted")) or any(
        link.get("status") == "up" for link in links.values()
    )
    out = []
    for resource in runtime:
        kind = resource.get("kind")
        status = dict(resource.get("status") or {})
        if kind == "Site":
            kept = next(
                (c for c in status.get("conditions") or [] if c.get("type") == "Running"), None
            )
            if not sets_running and kept is not None:
                running = Cond(
                    "Running", kept.get("status") == "True", str(kept.get("message") or "OK")
                )
            elif not router_running:
                running = Cond("Running", False, "No router pod is ready")
            elif answer is None:
                running = Cond("Running", False, "Router is not responding")
            else:
                running = Cond("Running", True)
            conditions = [Cond("Configured", True), running]
            if any(c.get("type") == "Resolved" for c in status.get("conditions") or []):
                conditions.append(Cond("Resolved", True))
            site_extra = {
                "endpoints": status.get("endpoints", []),
                "sitesInNetwork": max(1, len(sites_in_network)),
                "network": [{"name": s} for s in sites_in_network],
            }
            out.append(res.with_status(resource, Status(conditions, site_extra), stamp))
        elif kind == "Link":
            live = links.get(res.name_of(resource))
            extra: dict[str, Any] = {}
            if live and live.get("status") == "up":
                operational = Cond("Operational", True)
                extra["remoteSiteName"] = live.get("remoteSite")
            elif live and live.get("error"):
                operational = Cond("Operational", False, str(live["error"]), "Error")
            else:
                operational = Cond("Operational", False, "Not operational")
            conditions = [Cond("Configured", True), operational]
            out.append(res.with_status(resource, Status(conditions, extra), stamp))
        elif kind == "Listener":
            key = res.spec(resource).get("routingKey")
            matched = key in reachable
            out.append(
                res.with_status(
                    resource,
                    Status(
                        [
                            Cond("Configured", True),
                            Cond("Matched", matched, "OK" if matched else "No matching connectors"),
                        ],
                        {"hasMatchingConnector": matched},
                    ),
                    stamp,
                )
            )
        elif kind == "Connector":
            key = res.spec(resource).get("routingKey")
            # a connector is matched when a listener for its key exists in the network; the
            # router's answer only names local listeners, so a connected peer counts too
            matched = any(item.get("address") == key for item in listeners) or peers
            out.append(
                res.with_status(
                    resource,
                    Status(
                        [
                            Cond("Configured", True),
                            Cond("Matched", matched, "OK" if matched else "No matching listeners"),
                        ],
                        {"hasMatchingListener": matched},
                    ),
                    stamp,
                )
            )
        elif kind == "MultiKeyListener" and answer is not None:
            out.append(res.with_status(resource, _multi_key_listener(resource, reachable), stamp))
        else:
            out.append(resource)
    return out


def _multi_key_listener(resource: res.Resource, reachable: Any) -> res.Status:
    """What the network status makes of a MultiKeyListener (``multikey.report``)."""
    said = multikey.report(res.spec(resource), reachable, resource.get("status") or {})
    conditions = []
    if said.operational is not None:
        ok, message = said.operational
        conditions.append(Cond("Operational", ok, message))
    return render.multi_key_listener_status(conditions, said.fields)


def network_status(answer: dict[str, Any] | None, namespace: str) -> res.Resource:
    """``ConfigMap-skupper-network-status.yaml``: the collector's view as JSON."""
    answer = answer or {}
    payload = {
        "addresses": [
            {"name": key, "protocol": "tcp", "connectorCount": 1, "listenerCount": 0}
            for key in sorted(answer.get("reachable") or {})
        ],
        "siteStatus": [{"site": {"name": site}} for site in answer.get("sites") or []],
        "router": answer.get("router"),
        "links": answer.get("links") or [],
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": NETWORK_STATUS, "namespace": namespace},
        "data": {"NetworkStatus": json.dumps(payload, sort_keys=True)},
    }


class ParsedFiles:
    """Resource files parsed once per change (keyed by size and modification time)."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[int, int], list[res.Resource]]] = {}

    def documents(self, path: Path) -> list[res.Resource]:
        try:
            info = path.stat()
        except OSError:
            self._seen.pop(path, None)
            return []
        key = (info.st_size, info.st_mtime_ns)
        known = self._seen.get(path)
        if known is not None and known[0] == key:
            return known[1]
        try:
            found = res.parse_documents(path.read_text(), str(path))
        except (CliFailure, OSError):
            found = []
        self._seen[path] = (key, found)
        return found

    def load_dir(self, directory: Path) -> list[res.Resource]:
        if not directory.is_dir():
            return []
        found: list[res.Resource] = []
        for path in sorted(directory.iterdir()):
            if path.suffix in {".yaml", ".yml", ".json"} and path.is_file():
                found.extend(self.documents(path))
        return found


def _write_if_changed(
    directory: Path, resource: res.Resource, parsed: ParsedFiles | None = None
) -> bool:
    """Write only when something but the condition timestamps changed, and never into a
    namespace that ``system stop`` is removing meanwhile (that would bring it back);
    whether it wrote."""
    path = directory / res.file_name(resource)
    current = (parsed or ParsedFiles()).documents(path)
    if current and res.status_stamp_free(current[0]) == res.status_stamp_free(resource):
        return False
    try:  # a reload or `system stop` may have removed the directory, or remove it now
        res.write(directory, resource, create=False)
    except FileNotFoundError:
        return False
    return True


def poll_namespace(
    paths: NamespacePaths,
    routers: router_containers.RouterContainers,
    address: str,
    sets_running: bool = True,
    *,
    sessions: Management | None = None,
    parsed: ParsedFiles | None = None,
) -> bool:
    """Update one namespace's runtime resources from its router; whether anything changed."""
    if not paths.is_rendered():
        return False
    parsed = parsed or ParsedFiles()
    runtime = [r for r in parsed.load_dir(paths.runtime_resources) if r.get("kind") != "ConfigMap"]
    seen = routers.look(paths.router_container)
    client_cert = paths.certs / LOCAL_CLIENT_CERT
    if seen.running is False:
        answer = None
        if sessions is not None:
            sessions.close(paths.namespace)
    elif sessions is not None:
        answer = sessions.query(paths.namespace, address, MANAGEMENT_PORT, client_cert)
    else:
        answer = query_router(address, client_cert=client_cert)
    # podman not asked: the router's own answer decides, as the real controller's does
    router_running = seen.running if seen.running is not None else answer is not None
    if not paths.is_rendered():  # removed by `system stop` meanwhile: write nothing
        return False
    wrote = [
        _write_if_changed(paths.runtime_resources, resource, parsed)
        for resource in live_statuses(runtime, router_running, answer, sets_running)
    ]
    if answer is not None:
        status = network_status(answer, paths.namespace)
        wrote.append(_write_if_changed(paths.runtime_resources, status, parsed))
    return any(wrote)


def poll_once(
    env: Mapping[str, str],
    routers: router_containers.RouterContainers,
    sessions: Management | None = None,
    parsed: ParsedFiles | None = None,
) -> bool:
    """Poll every namespace; whether anything changed."""
    host = hostenv.current_host(env)
    home = data_home(env)
    changed = False
    for namespace in namespaces(home):
        try:
            changed |= poll_namespace(
                NamespacePaths(home, namespace),
                routers,
                host.address,
                sets_running=host.skupper_version != "2.1.0",
                sessions=sessions,
                parsed=parsed,
            )
        except (OSError, ValueError) as exc:
            print(f"namespace {namespace}: {exc}", file=sys.stderr, flush=True)
    return changed


@dataclass(frozen=True)
class Homes:
    """Where the controller looks: the data home its namespaces live in and the host's
    router containers (fixed for the controller's life: read once, not at every wake)."""

    data: Path
    routers: router_containers.RouterContainers

    @classmethod
    def of(cls, env: Mapping[str, str]) -> Homes:
        return cls(data_home(env), router_containers.for_host(env))

    def namespaces(self) -> list[NamespacePaths]:
        return [NamespacePaths(self.data, ns) for ns in namespaces(self.data)]

    def look(self, spaces: list[NamespacePaths]) -> list[router_containers.RouterSeen]:
        """Each namespace's router container, once per wake."""
        return [self.routers.look(paths.router_container) for paths in spaces]


def watched(homes: Homes, spaces: list[NamespacePaths]) -> list[Path]:
    """The directories whose changes may be worth a query: the data home and its
    namespaces' resources, and where each namespace's router container changes (on an
    emulated host its state file and log, on a real one its log)."""
    found = [homes.data, homes.data / "namespaces"]
    for paths in spaces:
        found += [paths.home, paths.runtime, paths.runtime_resources, paths.input_resources]
        found += homes.routers.watched(paths.router_container)
    return found


def marks(
    spaces: list[NamespacePaths], routers: list[router_containers.RouterSeen]
) -> tuple[object, ...]:
    """What a look at the namespaces sees without asking a router: each one's directories
    and its router container's state."""
    found: list[object] = []
    for paths, router in zip(spaces, routers, strict=True):
        for directory in (paths.home, paths.runtime_resources, paths.input_resources):
            try:
                found.append(directory.stat().st_mtime_ns)
            except OSError:
                found.append(None)
        found.append(router.mark)
    return tuple(found)


class QueryPacing:
    """When to ask the routers next: soon after a change, then less and less often."""

    def __init__(self) -> None:
        self.interval = FIRST_QUERY_SECONDS
        self.next_at = time.monotonic()

    def changed(self) -> None:
        self.interval = FIRST_QUERY_SECONDS
        self.next_at = min(self.next_at, time.monotonic() + FIRST_QUERY_SECONDS)

    def queried(self, answer_changed: bool) -> None:
        if answer_changed:
            self.interval = FIRST_QUERY_SECONDS
        elif self.interval * 2 <= SETTLE_QUERY_SECONDS:
            self.interval *= 2
        else:
            self.interval = IDLE_QUERY_SECONDS
        self.next_at = time.monotonic() + self.interval

    def wait(self) -> float:
        return max(0.0, self.next_at - time.monotonic())


def wait_for_news(
    watch: dirwatch.DirectoryWatch, routers: router_containers.RouterContainers, timeout: float
) -> bool:
    """Whether something changed before the timeout: a watched directory, or an event of
    the host's podman (a real-podman host); with no event stream, every wait is a look."""
    fds = [watch.fd, *routers.wake_fds()]
    ready, _, _ = select.select(fds, [], [], max(0.0, timeout))
    if watch.fd in ready:
        watch.drain()
    routers.drain(ready)
    return bool(ready) or routers.blind()


def _shut_down(signum: int, _frame: object) -> None:
    """SIGTERM and SIGINT end the controller cleanly, exit 0, as the real one's
    ``handleShutdown`` does (a container's PID 1 with no handler would ignore SIGTERM and
    wait for podman's SIGKILL)."""
    print("Shutting down system controller", flush=True)
    raise SystemExit(0)


def main() -> int:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _shut_down)
    print("System controller started", flush=True)
    env, homes = os.environ, Homes.of(os.environ)
    sessions = router_choice.for_world(hostenv.current_host(env).world_dir).management()
    parsed, pacing = ParsedFiles(), QueryPacing()
    spaces = homes.namespaces()
    routers = homes.look(spaces)
    seen = marks(spaces, routers)
    homes.routers.news(routers)
    with dirwatch.DirectoryWatch() as watch:
        while True:
            for directory in watched(homes, spaces):
                watch.add(directory)
            if pacing.wait() == 0.0:
                changed = poll_once(env, homes.routers, sessions, parsed)
                watch.drain()  # our own writes are not news
                seen = marks(spaces, homes.look(spaces))
                pacing.queried(changed)
            timeout = min(pacing.wait(), KEEPALIVE_SECONDS)
            while not (woke := wait_for_news(watch, homes.routers, timeout)):
                if pacing.wait() == 0.0:
                    break
                sessions.keep_alive()
                timeout = min(pacing.wait(), KEEPALIVE_SECONDS)
            if woke:
                spaces = homes.namespaces()  # one look per wake, for all that follows
                routers = homes.look(spaces)
                current = marks(spaces, routers)
                if homes.routers.news(routers) or current != seen:
                    pacing.changed()
                seen = current


if __name__ == "__main__":
    sys.exit(main())
