"""Render a site: certificates, skrouterd.json, runtime resources, static links, scripts.

Pure file work: nothing here runs podman or systemctl (see ``system.py``).
"""

from __future__ import annotations

import base64
import json
import shutil
import tarfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from skupper_sandbox.router import entities
from skupper_sandbox.router.entities import Entity

from . import pki
from . import resources as res
from .failure import CliFailure
from .paths import NamespacePaths
from .removal import remove_all
from .site_state import SiteState, has_explicit_ports, link_roles, role_port
from .version import is_v22

SSL_BASE = f"{entities.SSL_BASE}/runtime/certs"
LOCAL_ROUTER_ACCESS = "skupper-local"
LOCAL_SERVER_CERT = "skupper-local-server"
LOCAL_CLIENT_CERT = "skupper-local-client"
MANAGEMENT_PORT = 5671


@dataclass
class Rendered:
    """What a render produced that the caller reports or acts on."""

    site_id: str
    link_files: list[Path] = field(default_factory=list)


def site_id_of(paths: NamespacePaths) -> str | None:
    """The site id of an earlier render (the rendered Site's uid), if any."""
    for site in res.of_kind(res.load_dir(paths.runtime_resources), "Site"):
        uid = site["metadata"].get("uid")
        if uid:
            return str(uid)
    return None


def kept_issuer_files(paths: NamespacePaths) -> list[Path]:
    """The CA files a reload keeps (and warns about): each generated issuer's existing
    files; a CA the user supplied in input/issuers is written over, without a warning."""
    kept = []
    for name in pki.ISSUER_NAMES:
        if (paths.home / "input" / "issuers" / name / "tls.key").is_file():
            continue
        directory = paths.issuers / name
        kept += [directory / f for f in pki.CERT_FILES if (directory / f).is_file()]
    return kept


def cert_name(router_access: res.Resource) -> str:
    return str(res.spec(router_access).get("tlsCredentials") or res.name_of(router_access))


def server_sans(router_access: res.Resource) -> list[str]:
    spec = res.spec(router_access)
    sans = [str(s) for s in spec.get("subjectAlternativeNames") or []]
    bind = str(spec.get("bindHost") or "")
    return list(dict.fromkeys([*sans, bind] if bind else sans))


def link_hosts(router_access: res.Resource) -> list[str]:
    """Hosts a static link file is written for: the bind host (or 127.0.0.1) and each SAN."""
    bind = str(res.spec(router_access).get("bindHost") or "") or "127.0.0.1"
    return list(dict.fromkeys([bind, *server_sans(router_access)]))


def recreate(directory: Path) -> None:
    """``CleanupNamespaceForReload`` (fs_config_renderer.go@2.1.3): ``os.RemoveAll`` then
    ``os.MkdirAll``; a directory made again meanwhile is taken as it is."""
    try:
        remove_all(directory)
    except CliFailure as exc:
        raise CliFailure(f"failed to remove directory {directory}: {exc}") from exc
    directory.mkdir(parents=True, exist_ok=True)


def render(paths: NamespacePaths, state: SiteState, *, cli_version: str, platform: str) -> Rendered:
    """Render ``state`` into the namespace home, keeping the site id and CAs if present."""
    site_id = site_id_of(paths) or str(uuid.uuid4())
    for directory in (
        paths.router,
        paths.certs,
        paths.runtime_resources,
        paths.links,
        paths.scripts,
    ):
        recreate(directory)
    pki.ensure_issuers(paths)
    _issue_certs(paths, state)
    _write_link_profiles(paths, state)
    config = router_config(state, site_id, cli_version)
    (paths.router / "skrouterd.json").write_text(json.dumps(config, indent=4) + "\n")
    link_files = _write_static_links(paths, state)
    _write_snapshot(paths, state)
    _write_runtime_resources(paths, state, site_id, is_v22(cli_version))
    paths.platform_file.parent.mkdir(parents=True, exist_ok=True)
    paths.platform_file.write_text(f"platform: {platform}\n")
    write_scripts(paths, site_id, engine="podman")
    return Rendered(site_id=site_id, link_files=link_files)


def _issue_certs(paths: NamespacePaths, state: SiteState) -> None:
    local_dir = f"/etc/skupper-router/runtime/certs/{LOCAL_CLIENT_CERT}"
    pki.issue_cert(
        paths, LOCAL_SERVER_CERT, "skupper-local-ca", ["localhost", "127.0.0.1"], server=True
    )
    pki.issue_cert(
        paths,
        LOCAL_CLIENT_CERT,
        "skupper-local-ca",
        [],
        server=False,
        connect_json=pki.connect_json("127.0.0.1", MANAGEMENT_PORT, local_dir),
    )
    for router_access in state.router_accesses:
        name = cert_name(router_access)
        issuer = str(res.spec(router_access).get("issuer") or "skupper-site-ca")
        pki.issue_cert(paths, name, issuer, server_sans(router_access), server=True)
        port = role_port(link_roles(router_access)[0])
        pki.issue_cert(
            paths,
            f"client-{name}",
            issuer,
            [],
            server=False,
            connect_json=pki.connect_json(
                link_hosts(router_access)[0],
                port,
                f"/etc/skupper-router/runtime/certs/client-{name}",
            ),
        )


def _write_link_profiles(paths: NamespacePaths, state: SiteState) -> None:
    """Copy each link Secret's ``data`` (stringData is ignored, as on the real platform)."""
    for link in state.links:
        secret_name = link_secret(link)
        data = state.secrets[secret_name].get("data") or {}
        directory = paths.certs / f"{secret_name}-profile"
        directory.mkdir(parents=True, exist_ok=True)
        for key, value in data.items():
            pki.write_file(directory / key, base64.b64decode(str(value)))


def link_secret(link: res.Resource) -> str:
    return str(res.spec(link).get("tlsCredentials") or res.name_of(link))


def router_id(site_name: str) -> str:
    """``<site>-<unixtime>-<nanos>``: changes on every render, as the real one does."""
    now = time.time_ns()
    return f"{site_name}-{now // 1_000_000_000}-{now % 1_000_000_000}"


def router_config(state: SiteState, site_id: str, cli_version: str) -> list[Entity]:
    """The router configuration: a list of ``[entityType, attributes]``."""
    metadata = {"id": site_id, "name": state.name, "version": cli_version}
    mode = "edge" if state.edge else "interior"
    config: list[Entity] = [
        entities.router(router_id(state.name), mode, metadata, hello_max_age="3"),
        _ssl_profile(LOCAL_SERVER_CERT),
        entities.listener(
            LOCAL_ROUTER_ACCESS, "normal", "127.0.0.1", MANAGEMENT_PORT, LOCAL_SERVER_CERT
        ),
    ]
    for router_access in state.router_accesses:
        name = cert_name(router_access)
        config.append(_ssl_profile(name))
        bind = str(res.spec(router_access).get("bindHost") or "")
        for role in link_roles(router_access):
            role_name = str(role["name"])  # one of DEFAULT_PORTS' names
            listener_name = f"{res.name_of(router_access)}-{role_name}"
            config.append(entities.listener(listener_name, role_name, bind, role_port(role), name))
    wanted = "edge" if state.edge else "inter-router"
    for link in state.links:
        endpoint = next(
            (e for e in res.spec(link).get("endpoints") or [] if e.get("name") == wanted), None
        )
        if endpoint is None:
            continue  # no endpoint for this site's mode: nothing is configured
        profile = f"{link_secret(link)}-profile"
        entities.add_once(config, _ssl_profile(profile))
        config.append(
            entities.connector(
                res.name_of(link),
                wanted,
                str(endpoint.get("host")),
                str(endpoint.get("port")),
                profile,
                max(1, int(res.spec(link).get("cost") or 1)),
            )
        )
    for listener in state.listeners:
        spec = res.spec(listener)
        config.append(
            entities.tcp_listener(
                res.name_of(listener),
                str(spec.get("host")),
                str(spec.get("port")),
                str(spec.get("routingKey")),
                site_id,
            )
        )
    if is_v22(cli_version):  # 2.1's loader ignores the kind: nothing is rendered for it
        config += _multi_key_listeners(state, site_id)
    for connector in state.connectors:
        spec = res.spec(connector)
        host = str(spec.get("host") or "localhost")
        # the tcpConnector's name: ``<name>@<host>`` (internal/site/connector.go@2.1.3:10-13),
        # after ``connector/`` from 2.2.0 (the same @2.2.1:10-13, qdr.go@2.2.1:40
        # TcpConnectorNamePrefix): what a management DELETE names
        prefix = "connector/" if is_v22(cli_version) else ""
        config.append(
            entities.tcp_connector(
                f"{prefix}{res.name_of(connector)}@{host}",
                host,
                str(spec.get("port")),
                str(spec.get("routingKey")),
                site_id,
            )
        )
    return config


def _multi_key_listeners(state: SiteState, site_id: str) -> list[Entity]:
    """Each MultiKeyListener's tcpListener and listenerAddresses (``entities``)."""
    found: list[Entity] = []
    for mkl in (r for r in state.others if r["kind"] == "MultiKeyListener"):
        spec = res.spec(mkl)
        found += entities.multi_key_listener(
            res.name_of(mkl),
            str(spec.get("host")),
            str(spec.get("port")),
            spec.get("strategy") or {},
            site_id,
        )
    return found


def _ssl_profile(name: str) -> Entity:
    """The sslProfile ``name`` on the certificates of the same name under runtime/certs."""
    return entities.ssl_profile(name, f"{SSL_BASE}/{name}")


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _write_static_links(paths: NamespacePaths, state: SiteState) -> list[Path]:
    """``runtime/links/link-<RA>-<host>.yaml``: only for RouterAccesses with explicit ports."""
    written = []
    for router_access in state.router_accesses:
        if not has_explicit_ports(router_access):
            continue
        ra_name = res.name_of(router_access)
        client = paths.certs / f"client-{cert_name(router_access)}"
        link_name = f"link-{ra_name}"
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": link_name},
            "data": {f: _b64(client / f) for f in pki.CERT_FILES},
        }
        for host in link_hosts(router_access):
            link = {
                "apiVersion": res.API_VERSION,
                "kind": "Link",
                "metadata": {"name": link_name},
                "spec": {
                    "endpoints": [
                        {"name": role["name"], "host": host, "port": str(role_port(role))}
                        for role in link_roles(router_access)
                    ],
                    "tlsCredentials": link_name,
                    "cost": 1,
                },
            }
            path = paths.links / f"{link_name}-{host}.yaml"
            path.write_text(res.dump(secret) + "---\n" + res.dump(link))
            written.append(path)
    return written


def _endpoints(state: SiteState) -> list[dict[str, str]]:
    endpoints = []
    for router_access in state.router_accesses:
        host = link_hosts(router_access)[0]
        for role in link_roles(router_access):
            endpoints.append(
                {
                    "name": f"{res.name_of(router_access)}-{role['name']}",
                    "host": host,
                    "port": str(role_port(role)),
                    "group": "skupper-router",
                }
            )
    return endpoints


def multi_key_listener_status(
    conditions: list[res.Condition], extra: dict[str, object] | None = None
) -> res.Status:
    """A MultiKeyListener's status: Configured (at render), and Operational once the
    controller set it; Ready needs both, and is no condition of its own
    (multikeylistener_types.go@2.2.0:161-212)."""
    return res.Status(
        [res.Condition("Configured", True), *conditions],
        dict(extra or {}),
        required=("Configured", "Operational"),
        ready_condition=False,
    )


def initial_statuses(
    state: SiteState, site_id: str, multi_key_listeners: bool = True
) -> list[res.Resource]:
    """The runtime resources as rendered, before any controller has seen the router.

    The renderer marks the Site Configured and Running (Ready) before any router runs
    (fs_config_renderer.go@2.1.2:130-131); Links, Listeners and Connectors are only
    Configured, so they read "Not Operational" / "Not Matched" until the controller
    sets the missing condition. A MultiKeyListener (2.2) is Configured: "Not Operational"
    (``bindings``, pkg/nonkube/api/site_state.go@2.2.0:289-292)."""
    Cond, Status = res.Condition, res.Status
    stamp = res.now()
    site_conditions = [Cond("Configured", True), Cond("Running", True)]
    if state.router_accesses:
        site_conditions.append(Cond("Resolved", True))
    site_meta = dict(state.site)
    site_meta["metadata"] = {**state.site["metadata"], "uid": site_id}
    out = [
        res.with_status(
            site_meta,
            Status(
                site_conditions,
                {
                    "endpoints": _endpoints(state),
                    "sitesInNetwork": 1,
                },
            ),
            stamp,
        )
    ]
    for router_access in state.router_accesses:
        out.append(
            res.with_status(
                router_access,
                Status(
                    [Cond("Configured", True), Cond("Resolved", True)],
                    {
                        "endpoints": [
                            e
                            for e in _endpoints(state)
                            if e["name"].startswith(res.name_of(router_access) + "-")
                        ]
                    },
                ),
                stamp,
            )
        )
    for link in state.links:
        out.append(
            res.with_status(
                link,
                Status([Cond("Configured", True)], required=("Configured", "Operational")),
                stamp,
            )
        )
    for listener in state.listeners:
        out.append(
            res.with_status(
                listener,
                Status(
                    [Cond("Configured", True)],
                    {"hasMatchingConnector": False},
                    required=("Configured", "Matched"),
                ),
                stamp,
            )
        )
    for connector in state.connectors:
        out.append(
            res.with_status(
                connector,
                Status(
                    [Cond("Configured", True)],
                    {"hasMatchingListener": False},
                    required=("Configured", "Matched"),
                ),
                stamp,
            )
        )
    for other in state.others:
        if other["kind"] != "MultiKeyListener":
            out.append(other)
        elif multi_key_listeners:  # 2.1's loader drops the kind: its state has none
            out.append(res.with_status(other, multi_key_listener_status([]), stamp))
    out.extend(state.secrets.values())  # Secret-<name>.yaml: link keys included
    local = res.new(
        "RouterAccess",
        LOCAL_ROUTER_ACCESS,
        str(state.site["metadata"].get("namespace") or ""),
        {
            "roles": [{"name": "normal", "port": MANAGEMENT_PORT}],
            "tlsCredentials": LOCAL_SERVER_CERT,
            "issuer": "skupper-local-ca",
            "bindHost": "127.0.0.1",
        },
    )
    out.append(
        res.with_status(local, Status([Cond("Configured", True), Cond("Resolved", True)]), stamp)
    )
    return out


def _certificates(paths: NamespacePaths, namespace: str) -> list[res.Resource]:
    """A Certificate per CA and issued certificate, as the runtime site state lists them."""
    found = []
    for name in pki.ISSUER_NAMES:
        found.append(res.new("Certificate", name, namespace, {"ca": "", "signing": True}))
    if paths.certs.is_dir():
        for directory in sorted(p for p in paths.certs.iterdir() if p.is_dir()):
            if directory.name.endswith("-profile"):
                continue  # a link Secret's files, not an issued certificate
            client = (directory / "connect.json").is_file()
            spec = {"ca": "", "client": client, "server": not client}
            found.append(res.new("Certificate", directory.name, namespace, spec))
    return found


def _write_runtime_resources(
    paths: NamespacePaths, state: SiteState, site_id: str, multi_key_listeners: bool
) -> None:
    """runtime/resources as api.MarshalSiteState writes it (site_state.go@2.1.2): every
    resource with its status, and also the Certificates and the Secrets (link Secrets
    with their private keys)."""
    namespace = str(state.site["metadata"].get("namespace") or paths.namespace)
    rendered = initial_statuses(state, site_id, multi_key_listeners)
    for resource in [*rendered, *_certificates(paths, namespace)]:
        res.write(paths.runtime_resources, resource)


def _write_snapshot(paths: NamespacePaths, state: SiteState) -> None:
    """internal/snapshot: the loaded sources of this render; the previous snapshot is kept
    as sources.backup.tar.gz (MarshalSiteStates, fs_config_renderer.go@2.1.2:176-209)."""
    snapshot = paths.internal / "snapshot"
    if snapshot.is_dir() and any(snapshot.iterdir()):
        with tarfile.open(paths.home / "sources.backup.tar.gz", "w:gz") as tar:
            for file in sorted(snapshot.iterdir()):
                tar.add(file, arcname=file.name)
        shutil.rmtree(snapshot)
    for resource in state.all_resources():
        res.write(snapshot, resource)


START_SCRIPT = """#!/usr/bin/env sh

set -o errexit
set -o nounset

for container in $({engine} container ls --filter label=application=skupper-v2 \
--filter label=skupper.io/site-id={site_id} --format {{{{.Names}}}} --all); do
    {engine} {action} ${{container}}
done
"""


def write_scripts(paths: NamespacePaths, site_id: str, engine: str) -> None:
    """``internal/scripts/{start,stop}.sh``: start or stop every container of the site."""
    paths.scripts.mkdir(parents=True, exist_ok=True)
    for name, action in (("start.sh", "start"), ("stop.sh", "stop -t 10")):
        path = paths.scripts / name
        path.write_text(START_SCRIPT.format(engine=engine, site_id=site_id, action=action))
        path.chmod(0o755)
