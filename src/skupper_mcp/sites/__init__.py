"""The Skupper actions for one site: podman hosts over a connector, Kubernetes over its API."""
