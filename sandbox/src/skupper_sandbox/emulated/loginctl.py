"""Emulated `loginctl`: whether the host's user lingers is logind's file
``/var/lib/systemd/linger/<user>`` under the host's sysroot (``hostenv.linger_file``);
``enable-linger`` makes it, and with it the user manager comes up (logind starts
``user@UID.service`` at once), ``disable-linger`` removes it."""

from __future__ import annotations

import sys

from skupper_sandbox import hostenv


def user_properties(info: hostenv.HostInfo) -> dict[str, str]:
    return {
        "UID": str(info.uid),
        "GID": str(info.uid),
        "Name": info.user,
        "RuntimePath": f"/run/user/{info.uid}",
        "Service": f"user@{info.uid}.service",
        "Slice": f"user-{info.uid}.slice",
        "State": "active" if hostenv.manager_may_run(info) else "closing",
        "Linger": "yes" if hostenv.lingering(info) else "no",
    }


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    properties: list[str] = []
    value_only = False
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in ("-p", "--property") and i < len(args):
            properties.extend(args[i].split(","))
            i += 1
        elif arg.startswith("--property="):
            properties.extend(arg.split("=", 1)[1].split(","))
        elif arg.startswith("-p") and len(arg) > 2:
            properties.extend(arg[2:].split(","))
        elif arg == "--value":
            value_only = True
        elif not arg.startswith("-"):
            positional.append(arg)
    try:
        info = hostenv.current_host()
    except hostenv.NotOnSandboxHost:
        print("Failed to connect to bus: No such file or directory", file=sys.stderr)
        return 1
    verb, *rest = positional or ["list-users"]
    if verb in ("enable-linger", "disable-linger"):
        user = rest[0] if rest else info.user
        if user not in (info.user, str(info.uid)):
            print(f"Failed to look up user {user}: No such process", file=sys.stderr)
            return 1
        hostenv.set_linger(info, verb == "enable-linger")
        return 0
    if verb == "show-user":
        user = rest[0] if rest else info.user
        if user not in (info.user, str(info.uid)):
            print(
                f"Failed to get user: User ID {user} is not logged in or lingering", file=sys.stderr
            )
            return 1
        props = user_properties(info)
        for key in properties or list(props):
            if key in props:
                print(props[key] if value_only else f"{key}={props[key]}")
        return 0
    if verb == "list-users":
        print(f"  UID USER\n{info.uid:>5} {info.user}\n\n1 users listed.")
        return 0
    print(f"Unknown command verb {verb}.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
