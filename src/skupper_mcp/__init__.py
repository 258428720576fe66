"""skupper-mcp: control a Skupper V2 network that exposes remote GPU-hosted LLMs on localhost."""

__version__ = "0.1.0"
