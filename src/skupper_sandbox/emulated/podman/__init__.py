"""Emulated `podman` 4.9: containers as real processes on the sandbox host.

Only what the product and the emulated skupper use, with podman's messages and exit
codes. State lives in the container store (`containers.py`); each started container has
a detached monitor (`conmon.py`). A container whose process dies is not restarted,
whatever its restart policy: the seed observed that podman alone does not do it.

Modules: `cli` (global flags, dispatch), `options` (flag parsing), `host`, `create`,
`lifecycle` (start/stop/remove a process), `report` (status, ps and inspect JSON),
`gotemplate` (`--format`), `container_verbs`, `listing` (ps, inspect), `engine`
(pull, image, version, info).
"""
