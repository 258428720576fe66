"""How podman reports a failure: `Error: <message>` and an exit code."""

from __future__ import annotations


class PodmanError(Exception):
    """An error podman reports as `Error: <message>` with an exit code."""

    def __init__(self, message: str, code: int = 125) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def no_such_container(name: str) -> PodmanError:
    return PodmanError(f'no container with name or ID "{name}" found: no such container')
