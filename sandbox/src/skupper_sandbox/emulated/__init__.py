"""Emulated host tools: systemd user manager, podman, skupper, loginctl, curl."""
