"""The sandbox's Kubernetes consumer site: an HTTPS API the real client talks to, and a
controller that runs the site's router pod (docs/sandbox.md section 7)."""
