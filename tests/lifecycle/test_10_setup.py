"""T1: setup builds every site and links them; a second setup changes nothing."""

from __future__ import annotations

import stat
from pathlib import Path

from skupper_mcp.engine.core import Engine
from skupper_mcp.results import CheckResult, OperationResult
from skupper_sandbox.testing import World

from .conftest import bound, listener_port, namespace_dir

PODMAN_HOSTS = ("rhel-ai", "rhtevan-work", "local")


def key_files(namespace: Path) -> dict[str, int]:
    """Every private-key file of a namespace (as ``facts.private_keys`` names them), by path
    relative to it, with its permission bits."""
    found = {}
    for path in namespace.rglob("*"):
        rel = path.relative_to(namespace).as_posix()
        keyish = (
            path.name == "tls.key"
            or (path.parent.name == "resources" and path.name.startswith("Secret-"))
            or rel.startswith("runtime/links/")
        )
        if keyish and path.is_file() and not path.is_symlink():
            found[rel] = stat.S_IMODE(path.stat().st_mode)
    return found


async def test_after_setup_every_site_is_ready_and_both_links_connected(
    built: World, engine: Engine
) -> None:
    status = await engine.status()
    podman_sites = [s for s in status.sites if s.platform == "podman"]
    assert {s.host for s in podman_sites} == {"rhel-ai", "rhtevan-work", "local"}
    for site in podman_sites:
        assert site.reachable and site.container == "running", site
        assert site.router and site.router.startswith("active"), site
        assert not site.stale
    local_links = [link for link in status.links if link.from_site == "local-sandbox"]
    assert len(local_links) == 2
    assert all(link.status == "Ready" and link.tcp_probe for link in local_links), local_links
    for provider in ("rhel-ai", "rhtevan-work"):
        assert await bound(built, "local", listener_port(built, provider))


async def test_second_setup_changes_nothing_and_says_so(engine: Engine) -> None:
    result = await engine.setup()
    assert isinstance(result, OperationResult), result.summary
    assert result.ok, result.summary
    assert not any(site.changed for site in result.sites), [
        (s.host, [st.name for st in s.steps]) for s in result.sites if s.changed
    ]
    assert "nothing to change" in result.summary
    assert {(a.host, a.profile, a.action) for a in result.model_actions} == {
        ("rhel-ai", "g8b-fp8-spec-128k", "setup"),
        ("rhtevan-work", "g3b-16k", "setup"),
    }


async def test_after_setup_no_private_key_is_readable_by_others_and_the_links_hold(
    built: World, engine: Engine
) -> None:
    """Setup used to chmod -R o+r runtime/certs, leaving every tls.key -rw-r--r--: the hub's
    server key and the client keys peers link with. Now each key is its owner's alone, the
    routers (restarted by setup after that) read them as their owner, and the links hold."""
    for host in PODMAN_HOSTS:
        keys = key_files(namespace_dir(built, host))
        assert any(name.endswith("/tls.key") for name in keys), (host, keys)
        opened = {name: f"{mode:o}" for name, mode in keys.items() if mode & 0o077}
        assert opened == {}, host
        certs = namespace_dir(built, host) / "runtime" / "certs"
        public = [p for p in certs.rglob("*.crt") if stat.S_IMODE(p.stat().st_mode) & 0o400]
        assert public, host  # the certificates are left as Skupper writes them
    status = await engine.status()
    local_links = [link for link in status.links if link.from_site == "local-sandbox"]
    assert len(local_links) == 2
    assert all(link.status == "Ready" and link.tcp_probe for link in local_links), local_links
    assert all(s.container == "running" for s in status.sites if s.platform == "podman")
    checked = await engine.setup(check=True)
    assert isinstance(checked, CheckResult)
    keys_checks = [c for c in checked.checks if c.name == "private-keys"]
    assert {c.site for c in keys_checks} == set(PODMAN_HOSTS)
    assert all(c.status == "pass" for c in keys_checks), keys_checks
