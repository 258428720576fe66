"""The shipped setup and teardown scripts (``scripts/backup.sh``, ``restore-issuer.sh``,
``install-units.sh``, ``remove.sh``, ``client-cert.sh``) as a POSIX sh runs them on a host:
a non-root user's layout in a temporary HOME, with ``systemctl``, ``podman`` and ``skupper``
replaced by tools that note their arguments."""

from __future__ import annotations

import base64
import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from fake_connector import FakeConnector
from skupper_mcp.facts import names
from skupper_mcp.facts.site_state import SiteState, client_cert_script
from skupper_mcp.sites.podman import PodmanSite, _listed_names
from skupper_mcp.sites.work import Script

NS = "models"
#: Each tool notes its arguments, one call a line, in $CALLS.
NOTING_TOOL = '#!/bin/sh\necho "$(basename "$0") $*" >> "$CALLS"\n'


@pytest.fixture
def host(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("systemctl", "podman", "skupper"):
        (bin_dir / tool).write_text(NOTING_TOOL)
        (bin_dir / tool).chmod(0o755)
    (bin_dir / "id").write_text('#!/bin/sh\ncase "$1" in -u) echo 1000 ;; *) echo tester ;; esac\n')
    (bin_dir / "id").chmod(0o755)
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_RUNTIME_DIR": str(tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(tmp_path / "calls"),
    }


def _run(host: dict[str, str], script: Script | str) -> str:
    text = script.text if isinstance(script, Script) else script
    stdin = script.stdin if isinstance(script, Script) else None
    ran = subprocess.run(
        ["sh", "-c", text], env=host, input=stdin, capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def _nsdir(host: dict[str, str], ns: str = NS) -> Path:
    return Path(host["HOME"]) / ".local/share/skupper/namespaces" / ns


def _calls(host: dict[str, str]) -> list[str]:
    path = Path(host["CALLS"])
    return path.read_text().splitlines() if path.exists() else []


def _site() -> PodmanSite:
    return PodmanSite(FakeConnector("h"), NS)


def test_a_backup_restores_into_a_new_namespace(host: dict[str, str]) -> None:
    ca = _nsdir(host) / "runtime/issuers/skupper-site-ca"
    ca.mkdir(parents=True)
    (ca / "ca.crt").write_text("CERT")
    (ca / "tls.key").write_text("KEY")
    (_nsdir(host) / "input/resources").mkdir(parents=True)
    (_nsdir(host) / "input/resources/Site-s.yaml").write_text("kind: Site\n")
    archive = io.BytesIO()
    out = _run(host, _site().backup_script())
    frames = dict(line.split("\n", 1) for line in out.split("@@")[1:])
    files = _listed_names("h", frames["files"].strip().removeprefix("|"))
    assert sorted(files) == [
        "input/resources/Site-s.yaml",
        "runtime/issuers/skupper-site-ca/ca.crt",
        "runtime/issuers/skupper-site-ca/tls.key",
    ]
    archive.write(base64.b64decode(frames["archive"].strip().removeprefix("|")))
    archive.seek(0)
    with tarfile.open(fileobj=archive) as tar:
        assert sorted(m.name for m in tar.getmembers() if m.isfile()) == sorted(files)
    restored = {"ca.crt": b"CERT", "tls.key": b"KEY"}
    other = PodmanSite(FakeConnector("h"), "fresh")
    _run(host, other.restore_issuer(restored))
    issuer = _nsdir(host, "fresh") / "input/issuers/skupper-site-ca"
    assert (issuer / "ca.crt").read_bytes() == b"CERT"
    assert (issuer / "tls.key").stat().st_mode & 0o077 == 0
    assert issuer.stat().st_mode & 0o777 == 0o700


def test_no_namespace_is_an_empty_backup(host: dict[str, str]) -> None:
    assert _run(host, _site().backup_script()) == ""


def test_the_units_are_written_and_the_legacy_unit_goes(host: dict[str, str]) -> None:
    units = Path(host["HOME"]) / ".config/systemd/user"
    units.mkdir(parents=True)
    (units / "tester-skupper-controller.service").write_text("old")
    _run(host, _site().install_units(SiteState(user="", podman_path="/usr/bin/podman")))
    router, controller = names.router_unit(NS), names.controller_unit()
    assert "ExecStart" in (units / router).read_text()
    assert "ExecStart" in (units / controller).read_text()
    assert not (units / "tester-skupper-controller.service").exists()
    watch = Path(host["HOME"]) / names.WATCH_SCRIPT_PATH
    assert "/usr/bin/podman" in watch.read_text()
    assert _calls(host) == [
        f"systemctl --user disable {controller} {router}",
        "systemctl --user disable --now tester-skupper-controller.service",
        "systemctl --user daemon-reload",
        f"systemctl --user enable {controller} {router}",
    ]


def test_remove_keeps_the_controller_for_another_namespace(host: dict[str, str]) -> None:
    (_nsdir(host) / "runtime").mkdir(parents=True)
    (_nsdir(host, "other") / "runtime").mkdir(parents=True)
    out = _run(host, _site().remove(SiteState(user="tester")))
    assert out == "@@kept other\n"
    assert not _nsdir(host).exists() and _nsdir(host, "other").exists()
    assert "skupper system uninstall" not in _calls(host)
    _run(host, PodmanSite(FakeConnector("h"), "other").remove(SiteState(user="")))
    calls = _calls(host)
    assert "skupper system uninstall" in calls
    assert "podman rm -f tester-skupper-controller" in calls


def test_the_client_certificate_is_read_whole(host: dict[str, str]) -> None:
    certs = _nsdir(host) / "runtime/certs/link-a"
    certs.mkdir(parents=True)
    for name in ("ca.crt", "tls.crt", "tls.key"):
        (certs / name).write_text(name.upper())
    out = _run(host, client_cert_script(NS, "link-a"))
    assert out.endswith("@@end\n")
    assert f"@@file cert tls.key\n|{base64.b64encode(b'TLS.KEY').decode()}\n" in out
