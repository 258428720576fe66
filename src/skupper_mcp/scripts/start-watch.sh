#!/bin/bash
# skupper-mcp: run a container under systemd so that its exit ends the unit.
@podman@ start "$1" || exit $?
RC=$(@podman@ wait "$1")
exit "${RC:-1}"
