"""What a file name cannot do to a read: hostile names (newlines, ``@@`` markers, ``|``,
carriage returns, escape sequences, bytes that are not UTF-8, names as long as the file
system allows) planted in every directory a script lists, the real scripts run by a real
POSIX shell, and the parsed facts the same as without them. A name cannot hold a NUL (the
kernel ends a path there), so NULs are in the files' contents instead.

The scripts list ``input/resources`` and ``runtime/resources`` (a glob per kind),
``runtime/certs`` (``find``, for the certificates the router cannot read) and, for a backup,
``input`` and ``runtime/issuers`` (``find``)."""

from __future__ import annotations

import dataclasses
import getpass
import os
import subprocess
from pathlib import Path

import pytest

from local_tools import tool_dir
from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.engine.store.backups import check_complete
from skupper_mcp.facts.site_state import SiteState, parse_site_state, site_state_script
from skupper_mcp.sites.podman import PodmanSite

NS = "models"
FAKE_PODMAN = """#!/bin/sh
case "$1" in
  ps) printf '%s' '[{"Names": ["models-skupper-router"], "State": "running"}]' ;;
  inspect) exit 125 ;;
esac
"""
FAKE_SYSTEMCTL = "#!/bin/sh\nprintf 'Id=podman.socket\\nActiveState=active\\n'\n"
FAKE_SKUPPER = "#!/bin/sh\necho 'cli 2.1.3'\n"
#: The tests run as root on some machines: the layout is a user's (``$XDG_DATA_HOME``).
FAKE_ID = '#!/bin/sh\n[ "$1" = -u ] && { echo 1000; exit 0; }\nexec /usr/bin/id "$@"\n'

#: The attack as reproduced: with ``tmp/evil`` under it, this directory's name made the
#: certificates check print ``@@podman /tmp/evil`` on a line of its own.
FORGING_DIR = b"x\n@@podman "
HOSTILE_NAMES = [
    FORGING_DIR,
    b"y\n@@user root\n@@end\n@@certs-private",
    b"|@@rendered",
    b"@@issuer 0000",
    b"z\r@@podman /bin/sh\r",
    b"\x1b]0;title\x07\x1b[2J",
    b"\xff\xfe not utf-8 \xc3",
    b"a" * 255,  # NAME_MAX
    b"-print0 $(touch pwned) `id` ' \" ;",
]
SITE = b"apiVersion: skupper.io/v2alpha1\nkind: Site\nmetadata:\n  name: hub\nspec: {}\n"


#: The fake host's tools, by name.
TOOLS = {"podman": FAKE_PODMAN, "systemctl": FAKE_SYSTEMCTL, "skupper": FAKE_SKUPPER, "id": FAKE_ID}


@pytest.fixture
def host(tmp_path: Path) -> dict[str, str]:
    """A fake host (its tools on PATH) with a namespace holding a Site, a rendered Site and
    a CA; the environment the scripts run in."""
    bin_dir = tool_dir(tmp_path / "bin", **TOOLS)
    ns = tmp_path / "data/skupper/namespaces" / NS
    for sub in ("input/resources", "runtime/resources", "runtime/certs/site", "runtime/issuers/ca"):
        (ns / sub).mkdir(parents=True)
    (ns / "input/resources/Site-hub.yaml").write_bytes(SITE)
    (ns / "runtime/resources/Site-hub.yaml").write_bytes(SITE)
    for name in ("ca.crt", "tls.crt", "tls.key"):
        (ns / "runtime/issuers/ca" / name).write_text(name)
        (ns / "runtime/certs/site" / name).write_text(name)
        (ns / "runtime/certs/site" / name).chmod(0o644)
    return {
        "HOME": str(tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "NS_DIR": str(ns),
    }


def read(host: dict[str, str]) -> SiteState:
    done = subprocess.run(
        ["sh", "-c", site_state_script(NS)], env=host, capture_output=True, timeout=60
    )
    return parse_site_state(done.stdout.decode(errors="replace"))


def plant(directory: Path, name: bytes, content: bytes, mode: int = 0o644) -> Path:
    """A file ``name`` (bytes: it need not be UTF-8) in ``directory``; a name holding a
    ``/`` is a directory path, made on the way."""
    path = Path(os.fsdecode(os.path.join(os.fsencode(directory), name)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(mode)
    return path


def test_a_directory_name_cannot_forge_the_podman_path(host: dict[str, str]) -> None:
    """The reproduced attack: ``runtime/certs/x<newline>@@podman /tmp/evil`` (mode 0600).
    The podman path stays the host's own; the file is listed under a name made plain."""
    certs = Path(host["NS_DIR"]) / "runtime/certs"
    plant(certs, FORGING_DIR + b"/tmp/evil", b"#!/bin/sh\ntouch pwned\n", 0o600)
    state = read(host)
    assert state.complete and not state.refused
    assert state.podman_path == str(Path(host["PATH"].split(":")[0]) / "podman")
    assert state.certs_private
    assert state.private_certs == ["600 runtime/certs/x???podman /tmp/evil"]


def test_hostile_names_in_every_listed_directory_leave_the_facts_as_they_were(
    host: dict[str, str],
) -> None:
    clean = read(host)
    assert clean.complete and not clean.refused and not clean.certs_private
    assert set(clean.input_resources) == set(clean.runtime_resources) == {("Site", "hub")}
    ns = Path(host["NS_DIR"])
    for name in HOSTILE_NAMES:
        short = name[:200]  # room for the kind's prefix and .yaml within NAME_MAX
        for resources in (ns / "input/resources", ns / "runtime/resources"):
            # the same Site again under a hostile name: the facts must not change at all
            plant(resources, b"Site-" + short + b".yaml", SITE)
            plant(resources, b"Listener-" + short + b".yaml", b"\0@@podman /tmp/evil\n\0")
        plant(ns / "runtime/certs", name + b"/tmp/evil", b"key", 0o600)
        plant(ns / "runtime/certs/site", name, b"key", 0o600)
    hostile = read(host)
    # every fact is as it was but the evidence of the private certificates, which is the
    # first three of them, each under its name made plain
    assert (
        dataclasses.replace(hostile, certs_private=False, private_certs=[], now=clean.now) == clean
    )
    assert hostile.certs_private and len(hostile.private_certs) == 3
    assert all(line.startswith("600 runtime/certs/") for line in hostile.private_certs)
    assert not any("\n" in line or "\r" in line for line in hostile.private_certs)
    assert not (Path(host["HOME"]) / "pwned").exists()
    assert hostile.user == getpass.getuser()


async def test_hostile_names_are_backed_up_and_checked_by_their_own_names(
    host: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backup lists ``input`` and ``runtime/issuers``: each name comes back whole, so the
    check that the archive holds every file passes (split on its newlines, a name was files
    the archive lacked, and teardown refused)."""
    for key in ("HOME", "PATH", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(key, host[key])
    ns = Path(host["NS_DIR"])
    planted = []
    for name in HOSTILE_NAMES:
        planted.append(plant(ns / "input/resources", b"Site-" + name[:200] + b".yaml", SITE))
        planted.append(plant(ns / "runtime/issuers/ca", name, b"x"))
    found = await PodmanSite(LocalConnector("gpu-1"), NS).backup_archive()
    expected = {str(p.relative_to(ns)) for p in planted}
    assert expected <= set(found.files)
    assert set(found.files) - expected == {
        "input/resources/Site-hub.yaml",
        *(f"runtime/issuers/ca/{n}" for n in ("ca.crt", "tls.crt", "tls.key")),
    }
    check_complete("gpu-1", found.archive, found.files)
