"""Record what this machine's real podman answers, for the tests that read it
(tests/test_podman_recorded.py): ``python tests/podman_real/record.py`` as root, with
podman and runc installed (scripts/host-deps.sh). Writes ``podman-<version>.json``.

Every container lives in a storage of its own under a temporary directory (the sandbox's
per-host layout: ``skupper_sandbox.real_podman``), never the machine's podman storage;
the directory's path is written as ``$STORE`` so that no path of the recording machine is
kept. Each case is one podman command: its argv (without the per-store configuration),
exit status, stdout and stderr. The ``rootless_*`` cases are run by a Unix user made for the
recording (``skupper_sandbox.real_users``), in a store it owns, and removed after; its uid
is kept in each of them (``uid``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    from skupper_sandbox import real_podman

    with tempfile.TemporaryDirectory(prefix="skmcp-podman-record-") as tmp:
        store = Path(tmp)
        config = real_podman.StoreConfig(store, volumes=(), env={})
        config.write()
        env = {**os.environ, **config.env_vars()}
        cases: dict[str, dict[str, object]] = {}

        def run(case: str, *args: str) -> dict[str, object]:
            done = subprocess.run(
                ["podman", *args], env=env, capture_output=True, text=True, timeout=120
            )
            entry = {
                "argv": ["podman", *args],
                "rc": done.returncode,
                "stdout": done.stdout.replace(tmp, "$STORE"),
                "stderr": done.stderr.replace(tmp, "$STORE"),
            }
            cases[case] = entry
            return entry

        run("version", "--version")
        real_podman.import_base_image(env, store)
        base = real_podman.BASE_IMAGE
        usr = ["-v", "/usr:/usr:ro"]
        run("ps_empty", "ps", "-a", "--format", "json")
        run(
            "create",
            "create", "--name", "router", "--network", "host",
            "--label", "application=skupper-v2", "--label", "skupper.io/site-id=abc",
            "-e", "FOO=bar", *usr, base,
            "/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2; exec sleep 300",
        )  # fmt: skip
        run("ps_created", "ps", "-a", "--format", "json")
        run("start", "start", "router")
        # until the container has printed both lines (the logs cases record them), however
        # long this machine takes
        deadline = time.monotonic() + 60
        while (
            "to-stderr"
            not in subprocess.run(
                ["podman", "logs", "router"], env=env, capture_output=True, text=True, timeout=120
            ).stderr
        ):
            if time.monotonic() > deadline:
                raise SystemExit("the router container printed nothing within 60 s")
            time.sleep(0.1)
        run("ps_running", "ps", "-a", "--format", "json")
        run("container_exists", "container", "exists", "router")
        run("logs", "logs", "router")
        run("logs_tail", "logs", "--tail", "1", "router")
        run("stop_killed", "stop", "-t", "1", "router")
        run("ps_exited_killed", "ps", "-a", "--format", "json")
        run("inspect_exited", "inspect", "router")
        run("wait_exited", "wait", "router")
        run("create_duplicate", "create", "--name", "router", *usr, base, "/bin/true")
        run("run_exit_3", "run", "--name", "three", *usr, base, "/bin/sh", "-c", "exit 3")
        run("ps_exited_3", "ps", "-a", "--filter", "name=three", "--format", "json")
        run("rm", "rm", "three")
        run("keep_id_rootful", "run", "--rm", "--userns", "keep-id", *usr, base, "/bin/true")
        run("unknown_image", "create", "--pull", "never", "localhost/no/such:1", "/bin/true")
        for verb in ("inspect", "logs", "start", "stop", "wait", "rm"):
            run(f"{verb}_missing", verb, "nosuch")
        run("rm_force_missing", "rm", "-f", "nosuch")
        run("container_exists_missing", "container", "exists", "nosuch")
        run("rename_missing", "rename", "nosuch", "other")
        run("rm_force", "rm", "-f", "router")
        run("ps_after_rm", "ps", "-a", "--format", "json")
        version = str(cases["version"]["stdout"]).split()[-1]
        out = HERE / f"podman-{version}.json"
        out.write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
        real_podman.remove_store(env, store)
    record_rootless(out)
    print(out)
    return 0


def record_rootless(out: Path) -> None:
    """Add what a rootless user's podman answers for Skupper's ``--user UID:GID --userns
    keep-id`` router to the recording."""
    from skupper_sandbox import real_podman, real_users

    cases = json.loads(out.read_text())
    with tempfile.TemporaryDirectory(prefix="skmcp-podman-rootless-") as tmp:
        Path(tmp).chmod(0o711)
        home = Path(tmp) / "home"
        home.mkdir()
        name = real_users.user_name(f"record-{os.getpid()}", "podman")
        account = real_users.create(name, home, "/bin/sh")
        try:
            real_users.give(Path(tmp), account)
            real_users.make_runtime_dir(account)
            store = Path(tmp) / "store"
            config = real_podman.StoreConfig(store, volumes=(), env={})
            config.write()
            real_users.give(store, account)
            as_user = real_podman.RunAs(
                account.uid, account.gid, (account.gid,), str(home), str(account.runtime_dir)
            )
            env = {"PATH": "/usr/bin:/bin", **config.env_vars()}
            real_podman.import_base_image(env, store, as_user=as_user)
            ids = f"{account.uid}:{account.gid}"
            run_env, options = real_podman.RunAs.env(as_user), as_user.options()

            def run(case: str, *args: str) -> None:
                done = subprocess.run(
                    ["podman", *args],
                    env={**env, **run_env},
                    capture_output=True,
                    text=True,
                    timeout=120,
                    **options,
                )
                cases[case] = {
                    "argv": ["podman", *args],
                    "rc": done.returncode,
                    "stdout": done.stdout.replace(tmp, "$STORE"),
                    "stderr": done.stderr.replace(tmp, "$STORE"),
                    "uid": account.uid,
                }

            base = real_podman.BASE_IMAGE
            run(
                "rootless_create_keep_id",
                "create", "--name", "router", "--user", ids, "--userns", "keep-id",
                "-v", "/usr:/usr:ro", base, "/bin/true",
            )  # fmt: skip
            run("rootless_inspect_keep_id", "inspect", "router")
            run("rootless_create_private", "create", "--userns", "private", base, "/bin/true")
            real_podman.remove_store(env, store, as_user)
        finally:
            real_users.remove(account, Path(tmp))
    out.write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
