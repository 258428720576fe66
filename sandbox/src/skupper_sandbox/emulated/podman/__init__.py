"""Emulated `podman` 4.9: containers as real processes on the sandbox host.

Only what the product and the emulated skupper use, with podman's messages and exit
codes. State lives in the container store (`containers.py`); each started container has
a detached monitor (`conmon.py`), which applies the restart policy when the process
ends on its own, as conmon's cleanup callback does in libpod.

Modules: `cli` (global flags, dispatch), `options` (flag parsing), `host`, `create`,
`lifecycle` (start/stop/remove a process), `report` (status, ps and inspect JSON),
`gotemplate` (`--format`), `container_verbs`, `listing` (ps, inspect), `engine`
(pull, image, version, info), `containers` (the container store, also read by the
world, the faults and the system-controller), `conmon` (the monitor, the host's `conmon`
tool), `userns` (which host uid a container's process has).
"""
