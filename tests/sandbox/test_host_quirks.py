"""The host quirks of ``skupper-sandbox up --host-quirk HOST=QUIRK`` (docs/sandbox.md, the
fidelity table): each one does on a sandbox host what the real source says it does on a
real one, and nothing else changes."""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncssh
import pytest

from hostkit import running_host, wait_for, write_host
from polling import eventually
from product import PODMAN_KINDS, podman_kind
from skupper_sandbox import quirks, real_podman
from skupper_sandbox import ssh as sandbox_ssh
from skupper_sandbox.cli import _parser, _world_spec, up_options
from skupper_sandbox.emulated.podman.warnings import CGROUPS_V1
from skupper_sandbox.layout import WorldLayout, WorldSpec
from skupper_sandbox.netprobe import port_open_async
from skupper_sandbox.testing import World, running_world

#: logrus's TextFormatter line on a stderr that is no terminal (an SSH exec request's)
LOGRUS_WARNING = re.compile(r'^time="[0-9T:+Z-]+" level=warning msg="(?P<msg>.*)"$')


def test_host_quirk_options_round_trip_and_refuse_unknown_names() -> None:
    args = _parser().parse_args(
        ["up", "--host-quirk", "rhel-ai=podman-warns", "--host-quirk", "local=shell=dash"]
    )
    spec = _world_spec(args)
    assert spec.host_quirks == {"rhel-ai": ("podman-warns",), "local": ("shell=dash",)}
    assert _world_spec(_parser().parse_args(["up", *up_options(spec)])) == spec
    for bad in ("rhel-ai=loud", "rhel-ai", "local=shell=csh"):
        with pytest.raises(quirks.QuirkError):
            quirks.parse([bad])


def test_podman_warns_writes_libpods_warning_on_stderr_and_leaves_stdout_alone(
    tmp_path: Path,
) -> None:
    with (
        running_host(tmp_path / "q", address="127.201.0.60", quirks=("podman-warns",)) as noisy,
        running_host(tmp_path / "c", address="127.201.0.61") as quiet,
    ):
        for kit in (noisy, quiet):
            made = kit.sh("podman run -d --name web busybox sleep 30")
            assert made.returncode == 0, made.stderr
        listed = noisy.sh("podman ps -a --format json")
        clean = quiet.sh("podman ps -a --format json")

        assert listed.returncode == 0
        assert [c["Names"] for c in json.loads(listed.stdout)] == [["web"]]
        assert json.loads(listed.stdout)[0].keys() == json.loads(clean.stdout)[0].keys()
        warning = LOGRUS_WARNING.match(listed.stderr.splitlines()[0])
        assert warning is not None and warning["msg"] == CGROUPS_V1
        assert clean.stderr == ""
        # the variable libpod names in its warning hides it
        hidden = noisy.sh("PODMAN_IGNORE_CGROUPSV1_WARNING=1 podman ps -q")
        assert hidden.stderr == "" and hidden.stdout.strip()
        assert noisy.sh("podman --log-level=error ps -q").stderr == ""


def test_journald_host_podman_logs_is_empty_and_journalctl_has_the_lines(
    tmp_path: Path,
) -> None:
    with running_host(tmp_path, address="127.201.0.62", quirks=("journald",)) as kit:
        ran = kit.sh("podman run -d --name talker busybox sh -c 'echo hello-journal; echo bye'")
        assert ran.returncode == 0, ran.stderr
        wait_for(
            lambda: (
                kit.sh("podman inspect -f '{{.State.Status}}' talker").stdout.strip() == "exited"
            ),
            timeout=60,
            what="the container to exit",
        )

        logs = kit.sh("podman logs talker")
        assert (logs.returncode, logs.stdout, logs.stderr) == (0, "", "")

        by_name = kit.sh("journalctl --user --no-pager -o cat CONTAINER_NAME=talker")
        assert by_name.stdout.splitlines() == ["hello-journal", "bye"]
        by_ident = kit.sh("journalctl --user -t talker -n 1 -o cat")
        assert by_ident.stdout == "bye\n"
        entry = json.loads(kit.sh("journalctl --user -o json -n 1 -t talker").stdout)
        assert entry["CONTAINER_ID_FULL"].startswith(entry["CONTAINER_ID"])
        assert (entry["SYSLOG_IDENTIFIER"], entry["PRIORITY"]) == ("talker", "6")
        short = kit.sh("journalctl --user -t talker -n 1").stdout
        assert re.fullmatch(r"\w{3} \d\d \d\d:\d\d:\d\d \S+ talker\[\d+\]: bye\n", short)
        # nothing matched: journalctl says so on stdout and succeeds, unless -q
        none = kit.sh("journalctl --user -u skupper-nothing")
        assert (none.returncode, none.stdout) == (0, "-- No entries --\n")
        assert kit.sh("journalctl --user -q -u skupper-nothing").stdout == ""


def test_a_quiet_host_keeps_podman_logs_and_has_no_container_entries(tmp_path: Path) -> None:
    with running_host(tmp_path, address="127.201.0.63") as kit:
        assert kit.sh("podman run -d --name talker busybox echo hello-file").returncode == 0
        wait_for(
            lambda: kit.sh("podman logs talker").stdout == "hello-file\n",
            timeout=60,
            what="the container's line in its log",
        )
        assert kit.sh("journalctl --user -q CONTAINER_NAME=talker").stdout == ""


# -- shell=NAME: both SSH servers run a session as sshd does, $SHELL -c COMMAND ------------

#: What each shell answers and the others cannot: sh reads `string` as a missing command
SHELL_PROBES = {
    "bash": ('echo "$0 ${BASH_VERSION:+bash}"; echo $SHELL', "bash bash\n/bin/bash\n"),
    "fish": ("string join - fish only; echo $SHELL", "fish-only\n/usr/bin/fish\n"),
    "zsh": ('echo "$0 ${ZSH_VERSION:+zsh}"; echo $SHELL', "zsh zsh\n/bin/zsh\n"),
    "dash": ("echo $0; echo $SHELL", "dash\n/bin/dash\n"),
}


def _shell_host(directory: Path, address: str, shell: str) -> WorldLayout:
    layout = WorldLayout(directory)
    write_host(
        layout.root,
        "q",
        address,
        user=getpass.getuser(),
        uid=os.getuid(),
        quirks=(f"shell={shell}",),
    )
    key = asyncssh.generate_private_key("ssh-ed25519")
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    layout.ssh_dir.mkdir(parents=True, exist_ok=True)
    layout.client_key.write_bytes(key.export_private_key())
    layout.client_key.chmod(0o600)
    layout.authorized_keys.write_bytes(key.export_public_key())
    layout.host_key("q").write_bytes(host_key.export_private_key())
    layout.host_key("q").chmod(0o600)
    return layout


@asynccontextmanager
async def _server(kind: str, layout: WorldLayout, address: str) -> AsyncIterator[int]:
    if kind == "asyncssh":
        acceptor = await sandbox_ssh.start_asyncssh_server(layout, "q", address, 0)
        try:
            yield acceptor.sockets[0].getsockname()[1]
        finally:
            acceptor.close()
            await acceptor.wait_closed()
        return
    port = 2222
    config = sandbox_ssh.write_sshd_config(layout, "q", address, port)
    sandbox_ssh.ensure_privsep_dir()
    proc = await asyncio.create_subprocess_exec(
        str(sandbox_ssh.SSHD),
        "-D",
        "-e",
        "-f",
        str(config),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:

        async def listening() -> bool:
            assert proc.returncode is None, "sshd exited"
            return await port_open_async(address, port)

        await eventually(listening, timeout=30, every=0.05, what="sshd to listen")
        yield port
    finally:
        os.killpg(proc.pid, 9)
        await proc.wait()


async def _run_over_ssh(
    kind: str, layout: WorldLayout, address: str, commands: list[str]
) -> list[asyncssh.SSHCompletedProcess]:
    async with (
        _server(kind, layout, address) as port,
        asyncssh.connect(
            address,
            port,
            username="root" if kind == "openssh" else getpass.getuser(),
            client_keys=[str(layout.client_key)],
            known_hosts=None,
            connect_timeout=30,
        ) as conn,
    ):
        return [await asyncio.wait_for(conn.run(command), 60) for command in commands]


@pytest.mark.parametrize("kind", ["asyncssh", "openssh"])
@pytest.mark.parametrize("shell", sorted(SHELL_PROBES))
def test_a_session_runs_under_the_users_login_shell(tmp_path: Path, kind: str, shell: str) -> None:
    if shutil.which(quirks.SHELLS[shell]) is None:
        pytest.skip(f"{quirks.SHELLS[shell]} is not installed (scripts/host-deps.sh)")
    if kind == "openssh" and shutil.which(str(sandbox_ssh.SSHD)) is None:
        pytest.skip("OpenSSH's sshd is not installed")
    address = {"asyncssh": "127.201.0.64", "openssh": "127.201.0.65"}[kind]
    layout = _shell_host(tmp_path, address, shell)
    command, expected = SHELL_PROBES[shell]
    posix_script = "x=1; [ $x = 1 ] && echo posix"
    result, posix = asyncio.run(_run_over_ssh(kind, layout, address, [command, posix_script]))
    assert (result.exit_status, result.stdout) == (0, expected), result.stderr
    if shell == "fish":
        # fish is not POSIX: it refuses a plain sh assignment, and (fish 3.6) its exit status
        # for the parse error is 0, with nothing on stdout: a POSIX script fails silently
        here = subprocess.run(
            [quirks.SHELLS["fish"], "-c", posix_script], capture_output=True, timeout=60
        )
        assert (posix.exit_status, posix.stdout) == (here.returncode, "")
        assert "fish: Unsupported use of '='" in str(posix.stderr)
    else:
        assert posix.stdout == "posix\n"


# -- every quirk on a world of either podman kind ------------------------------------------


@pytest.fixture(scope="module", params=PODMAN_KINDS)
def quirky(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    """A world whose rhel-ai warns from podman and logs in with zsh, and whose rhtevan-work
    logs its containers to the journal, on the emulated podman and on this machine's."""
    kind = podman_kind(request)
    spec = WorldSpec(
        providers=2,
        kubernetes=False,
        podman=kind,
        host_quirks={"rhel-ai": ("podman-warns", "shell=zsh"), "rhtevan-work": ("journald",)},
    )
    with running_world(tmp_path_factory.mktemp(f"quirks-{kind}"), spec) as world:
        yield world


def test_podman_warns_on_either_podman(quirky: World) -> None:
    code, out, err = quirky.ssh("rhel-ai", "podman ps -a --format json")
    assert code == 0, err
    assert isinstance(json.loads(out), list)  # stdout is podman's own
    warning = LOGRUS_WARNING.match(err.splitlines()[0])
    assert warning is not None and warning["msg"] == CGROUPS_V1, err
    assert len([line for line in err.splitlines() if CGROUPS_V1 in line]) == 1
    # the quiet host, the variable libpod names, a higher --log-level and --version: none
    for host, command in (
        ("local", "podman ps -q"),
        ("rhel-ai", "PODMAN_IGNORE_CGROUPSV1_WARNING=1 podman ps -q"),
        ("rhel-ai", "podman --log-level=error ps -q"),
        ("rhel-ai", "podman --log-level error ps -q"),
        ("rhel-ai", "podman --version"),
    ):
        code, _, err = quirky.ssh(host, command)
        assert code == 0 and "cgroups-v1" not in err, f"{host}: {command}: {err}"


def test_shell_quirk_on_either_podman(quirky: World) -> None:
    command, expected = SHELL_PROBES["zsh"]
    code, out, err = quirky.ssh("rhel-ai", command)
    assert (code, out) == (0, expected), err
    if quirky.info.podman == "real":  # the login shell of a real user is its passwd entry's
        _, entry, _ = quirky.ssh("rhel-ai", "getent passwd $(id -un)")
        assert entry.strip().endswith(":/bin/zsh")


def test_journald_on_either_podman(quirky: World) -> None:
    host = quirky.host_dir("rhtevan-work")
    if quirky.info.podman == "real":
        # this machine gives real podman no journal: the host keeps the emulation, says up
        assert "podman: emulated on rhtevan-work: the journald quirk" in quirky.stderr
        assert not real_podman.is_real(host)
        assert real_podman.is_real(quirky.host_dir("rhel-ai"))
    else:
        assert "emulated on" not in quirky.stderr
    ran = quirky.ssh("rhtevan-work", "podman run -d --name talker busybox sh -c 'echo hi-journal'")
    assert ran[0] == 0, ran[2]
    wait_for(
        lambda: (
            quirky.ssh("rhtevan-work", "journalctl --user -o cat -t talker")[1] == "hi-journal\n"
        ),
        timeout=60,
        what="the container's line in the journal",
    )
    assert quirky.ssh("rhtevan-work", "podman logs talker")[:2] == (0, "")
