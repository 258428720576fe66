"""Emulated systemd user manager of one sandbox host.

    python -m skupper_sandbox.emulated.systemd --host-dir H

Runs in the foreground (the world supervises it), listens on `H/run/bus` (what
`/run/user/<uid>/bus` is on the host) and answers `systemctl --user` (`systemctl.py`)
with one JSON request and one JSON answer per connection. Units are the files in
`~/.config/systemd/user/*.service` plus the built-in `podman.socket`, with systemd's
documented semantics for the directives services use here (see docs/sandbox.md §3).

Modules: `unitfile` (parsing unit files), `unit` (one unit's processes and jobs),
`manager` (the units of a host, the bus, `main`), `bus` (the socket and unit names the
manager and `systemctl` share; it imports no asyncio).
"""
