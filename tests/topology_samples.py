"""Small topologies for the foundation's tests."""

# Two providers and a local site; no Kubernetes site. Addresses from the foundation's
# test block 127.207.0.0/24.
SMALL_TOPOLOGY = """\
PROVIDER_HOSTS="alpha beta"
ALPHA_SSH_HOST=127.207.0.2
ALPHA_PUBLIC_HOST=127.207.0.2
ALPHA_INTER_ROUTER_PORT=8000
ALPHA_MODEL_PORT=9000
ALPHA_PROFILES="a-big=org/alpha-big a-small=org/alpha-small"
ALPHA_DEFAULT_PROFILE=a-big
BETA_SSH_HOST=127.207.0.3
BETA_PUBLIC_HOST=127.207.0.3
BETA_INTER_ROUTER_PORT=55671
BETA_MODEL_PORT=10000
BETA_PROFILES="b-fast=org/beta-fast"
LOCAL_SITE_NAME=local-test
"""


def ssh_topology(
    providers: list[tuple[str, str, int]],
    *,
    identities: list[str],
    known_hosts: str,
    connect_timeout: float = 5.0,
    listener_host: str = "127.207.0.1",
) -> str:
    """A topology whose providers (name, address, SSH port) are reached over real SSH."""
    lines = [f'PROVIDER_HOSTS="{" ".join(name for name, _, _ in providers)}"']
    for i, (name, address, port) in enumerate(providers):
        p = name.upper().replace("-", "_")
        lines += [
            f"{p}_SSH_HOST={address}",
            f"{p}_SSH_PORT={port}",
            f"{p}_SSH_USER=tester",
            f"{p}_PUBLIC_HOST={address}",
            f"{p}_INTER_ROUTER_PORT={20000 + 2 * i}",
            f"{p}_MODEL_HOST={address}",
            f"{p}_MODEL_PORT={30000 + i}",
            f'{p}_PROFILES="{name}-main=org/{name}-main {name}-alt=org/{name}-alt"',
        ]
    lines += [
        "LOCAL_SITE_NAME=local-test",
        f"LOCAL_LISTENER_HOST={listener_host}",
        f'SSH_IDENTITY="{" ".join(identities)}"',
        f"SSH_KNOWN_HOSTS={known_hosts}",
        f"SSH_CONNECT_TIMEOUT={connect_timeout}",
    ]
    return "\n".join(lines) + "\n"


#: Every tool the server registers (the read-only ones are in READ_ONLY_TOOLS).
ALL_TOOLS = {
    "models",
    "resolve_profile",
    "setup",
    "up",
    "down",
    "status",
    "test_model",
    "teardown",
    "diagnose",
    "logs",
    "history",
}
READ_ONLY_TOOLS = [
    "diagnose",
    "history",
    "logs",
    "models",
    "resolve_profile",
    "status",
    "test_model",
]

# A stranger's topology: two GPU hosts of their own, none of the makers' lab names, no
# Kubernetes site. What the agent reads (instructions, descriptions, prompts) names only these.
GPU_TOPOLOGY = """\
PROVIDER_HOSTS="gpu1 gpu2"
GPU1_SSH_HOST=127.207.0.2
GPU1_PUBLIC_HOST=127.207.0.2
GPU1_INTER_ROUTER_PORT=8000
GPU1_MODEL_PORT=9000
GPU1_PROFILES="qwen-32k=org/qwen qwen-8k=org/qwen-small"
GPU2_SSH_HOST=127.207.0.3
GPU2_PUBLIC_HOST=127.207.0.3
GPU2_INTER_ROUTER_PORT=55671
GPU2_MODEL_PORT=10000
GPU2_PROFILES="llama-16k=org/llama"
LOCAL_SITE_NAME=local-me
"""
#: The makers' lab hosts, sites and profiles: no stranger's topology has them.
LAB_NAMES = ("rhel-ai", "rhtevan-work", "hub-rhel-ai", "g3b-16k", "g8b", "crc")


# SMALL_TOPOLOGY with alpha serving two models side by side (issue 48): a chat server and
# an embeddings server, each its own port, routing key, local port, profiles and container.
TWO_ENDPOINTS_TOPOLOGY = SMALL_TOPOLOGY.replace(
    "ALPHA_MODEL_PORT=9000\n"
    'ALPHA_PROFILES="a-big=org/alpha-big a-small=org/alpha-small"\n'
    "ALPHA_DEFAULT_PROFILE=a-big\n",
    'ALPHA_ENDPOINTS="chat embed"\n'
    "ALPHA_CHAT_MODEL_PORT=9000\n"
    'ALPHA_CHAT_PROFILES="a-big=org/alpha-big a-small=org/alpha-small"\n'
    "ALPHA_CHAT_DEFAULT_PROFILE=a-big\n"
    "ALPHA_EMBED_MODEL_PORT=9001\n"
    'ALPHA_EMBED_PROFILES="a-embed=org/alpha-embed"\n',
)
