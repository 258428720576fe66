"""The sandbox: a simulated Skupper V2 network on one machine (see docs/sandbox.md)."""
