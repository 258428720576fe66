"""Ways to reach a host: local subprocess, SSH (asyncssh), Kubernetes API."""
