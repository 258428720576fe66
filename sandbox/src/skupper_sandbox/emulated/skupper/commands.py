"""``skupper site|listener|connector|link`` on the system platform."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

from . import resources as res
from .failure import CliFailure
from .paths import NamespacePaths
from .table import tab_table

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
OUTPUT_TYPES = ("json", "yaml")


def check_name(what: str, name: str) -> None:
    if not name:
        raise CliFailure(f"{what} name must not be empty")
    if not _NAME.match(name) or len(name) > 253:
        raise CliFailure(
            f"{what} name is not valid: value does not match this regular expression: "
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
        )


def check_port(what: str, port: str) -> int:
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise CliFailure(f"{what} port is not valid: value is not positive")
    return int(port)


def check_output(output: str | None) -> None:
    if output and output not in OUTPUT_TYPES:
        raise CliFailure(
            f"output type is not valid: value {output} not allowed. "
            f"It should be one of this options: {list(OUTPUT_TYPES)}"
        )


def encode(resource: res.Resource, output: str) -> str:
    if output == "json":
        return json.dumps(resource, indent=2)
    return res.dump(resource).rstrip("\n")


def default_sans(hostname: str, address: str) -> list[str]:
    """What 2.1 ``site create --enable-link-access`` computes: any-addresses, host name, IPs."""
    return list(dict.fromkeys(["0.0.0.0", "::", hostname, address]))


class Commands:
    """The resource commands of one namespace."""

    def __init__(self, paths: NamespacePaths) -> None:
        self.paths = paths

    def _write(self, resource: res.Resource) -> None:
        res.write(self.paths.input_resources, resource)

    def _remove(self, kind: str, name: str) -> None:
        path = self.paths.input_resources / f"{kind}-{name}.yaml"
        if not path.exists():
            raise CliFailure(f"{kind} {name} does not exist in namespace {self.paths.namespace}")
        path.unlink()

    def _current(self, kind: str) -> list[res.Resource]:
        """Resources of a kind: runtime first (they carry status), else the input."""
        runtime = res.of_kind(res.load_dir(self.paths.runtime_resources), kind)
        return runtime or res.of_kind(res.load_dir(self.paths.input_resources), kind)

    def _one(self, kind: str, name: str) -> res.Resource | None:
        return next((r for r in self._current(kind) if res.name_of(r) == name), None)

    # -- site --------------------------------------------------------------------------

    def site_create(self, name: str, link_access: bool, sans: list[str]) -> None:
        check_name("site", name)
        self._write(res.new("Site", name, self.paths.namespace, {}))
        if link_access:
            spec = {
                "roles": [{"name": "inter-router", "port": 55671}, {"name": "edge", "port": 45671}],
                "subjectAlternativeNames": sans,
            }
            self._write(
                res.new("RouterAccess", f"router-access-{name}", self.paths.namespace, spec)
            )

    def site_delete(self, name: str | None) -> None:
        sites = res.of_kind(res.load_dir(self.paths.input_resources), "Site")
        if name is None:
            if not sites:
                raise CliFailure("there is no existing Skupper site resource to delete")
            name = res.name_of(sites[0])
        self._remove("Site", name)
        access = self.paths.input_resources / f"RouterAccess-router-access-{name}.yaml"
        access.unlink(missing_ok=True)

    def site_status(self, output: str | None) -> str:
        check_output(output)
        sites = self._current("Site")
        if not sites:
            return "There is no existing Skupper site resource\n"
        if output:
            return "".join(encode(s, output) + "\n" for s in sites)
        rows = [("NAME", "STATUS", "MESSAGE")]
        rows += [(res.name_of(s), _status(s), _message(s)) for s in sites]
        return tab_table(rows, min_width=0, align_right=True)

    # -- listener / connector ----------------------------------------------------------

    def listener_create(
        self, name: str, port: str, routing_key: str | None, host: str | None
    ) -> None:
        check_name("listener", name)
        number = check_port("listener", port)
        host = host or "0.0.0.0"
        _check_host(host)
        spec = {"routingKey": routing_key or name, "host": host, "port": number, "type": "tcp"}
        self._write(res.new("Listener", name, self.paths.namespace, spec))

    def connector_create(
        self, name: str, port: str, routing_key: str | None, host: str | None
    ) -> None:
        check_name("connector", name)
        number = check_port("connector", port)
        host = host or "localhost"
        _check_host(host)
        spec = {"routingKey": routing_key or name, "host": host, "port": number, "type": "tcp"}
        self._write(res.new("Connector", name, self.paths.namespace, spec))

    def delete(self, kind: str, name: str) -> None:
        check_name(kind.lower(), name)
        self._remove(kind, name)

    def listener_status(self, name: str | None, output: str | None) -> str:
        check_output(output)
        found = self._current("Listener")
        if name:
            found = [r for r in found if res.name_of(r) == name]
        if not found:
            return "No listeners found\n"
        if output:
            return "".join(encode(r, output) + "\n" for r in found)
        rows = [("NAME", "STATUS", "ROUTING-KEY", "HOST", "PORT", "MATCHING-CONNECTOR", "MESSAGE")]
        for r in found:
            spec = res.spec(r)
            matched = str(bool((r.get("status") or {}).get("hasMatchingConnector"))).lower()
            rows.append(
                (
                    res.name_of(r),
                    _status(r),
                    str(spec.get("routingKey", "")),
                    str(spec.get("host", "")),
                    str(spec.get("port", 0)),
                    matched,
                    _message(r),
                )
            )
        return tab_table(rows)

    def connector_status(self, name: str | None, output: str | None) -> str:
        check_output(output)
        found = self._current("Connector")
        if name:
            found = [r for r in found if res.name_of(r) == name]
        if not found:
            return "No connectors found\n"
        if output:
            return "".join(encode(r, output) + "\n" for r in found)
        rows = [
            (
                "NAME",
                "STATUS",
                "ROUTING-KEY",
                "SELECTOR",
                "HOST",
                "PORT",
                "HAS MATCHING LISTENER",
                "MESSAGE",
            )
        ]
        for r in found:
            spec = res.spec(r)
            matched = str(bool((r.get("status") or {}).get("hasMatchingListener"))).lower()
            rows.append(
                (
                    res.name_of(r),
                    _status(r),
                    str(spec.get("routingKey", "")),
                    str(spec.get("selector", "")),
                    str(spec.get("host", "")),
                    str(spec.get("port", 0)),
                    matched,
                    _message(r),
                )
            )
        return tab_table(rows)

    # -- link --------------------------------------------------------------------------

    def link_status(self, name: str | None, output: str | None) -> str:
        check_output(output)
        links = self._current("Link")
        if name:
            link = self._one("Link", name)
            if link is None:
                raise CliFailure(
                    f'There is no link resource in the namespace with the name "{name}"'
                )
            if output:
                return encode(link, output) + "\n"
            return (
                f"Name\t: {name}\nStatus\t: {_status(link)}\n"
                f"Cost\t: {_cost(link)}\nMessage\t: {_message(link)}\n"
            )
        if not links:
            return "There are no link resources in the namespace\n"
        if output:
            return "".join(encode(r, output) + "\n" for r in links)
        rows = [("NAME", "STATUS", "COST", "MESSAGE")]
        rows += [(res.name_of(r), _status(r), _cost(r), _message(r)) for r in links]
        return tab_table(rows, min_width=0, align_right=True)

    def link_generate(self, name: str | None, host: str | None) -> str:
        """The first static link file matching the filters (reference §3.2)."""
        if not self.paths.is_rendered():
            raise CliFailure("there is no active site in this namespace")
        accesses = res.of_kind(res.load_dir(self.paths.runtime_resources), "RouterAccess")
        if not any(
            role.get("name") in ("inter-router", "edge")
            for ra in accesses
            for role in res.spec(ra).get("roles") or []
        ):
            raise CliFailure("this site is not enabled for link access, there are no links created")
        files = (
            sorted(p for p in self.paths.links.glob("*.yaml")) if self.paths.links.is_dir() else []
        )
        if not files:
            raise CliFailure("Error searching for tokens: there are no links created")
        matching = [p for p in files if _token_matches(p, name, host)]
        if not matching:
            return "no tokens found\n"
        return matching[0].read_text() + "\n"


def _token_matches(path: Path, name: str | None, host: str | None) -> bool:
    documents = res.parse_documents(path.read_text(), str(path))
    link = next((d for d in documents if d["kind"] == "Link"), None)
    if link is None:
        return False
    if name and res.name_of(link) != name:
        return False
    hosts = {str(e.get("host")) for e in res.spec(link).get("endpoints") or []}
    return not host or host in hosts


def _check_host(host: str) -> None:
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    if not re.match(r"^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$", host):
        raise CliFailure(f"host is not valid: a valid IP address or hostname is expected: {host}")


def _status(resource: res.Resource) -> str:
    return str((resource.get("status") or {}).get("status", ""))


def _message(resource: res.Resource) -> str:
    return str((resource.get("status") or {}).get("message", ""))


def _cost(resource: res.Resource) -> str:
    return str(res.spec(resource).get("cost", 0))
