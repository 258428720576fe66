"""The one-round-trip state script's parser, the desired resources and the units. Pure."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from fake_connector import framed
from skupper_mcp.connectors.shell import prelude, runnable
from skupper_mcp.facts.site_state import parse_site_state, site_state_script
from skupper_mcp.sites import resources as cr
from skupper_mcp.sites import units

OUTPUT = framed("""\
@@user ezhang
@@podman /usr/bin/podman
@@section version
Warning: Docker is not installed. Skipping image digests search.
COMPONENT               VERSION
router                  3.4.2
cli                     2.1.3
@@rc 0
@@section units
Id=skupper-default.service
LoadState=loaded
ActiveState=active
SubState=running
Result=success
NRestarts=2
UnitFileState=static
MainPID=4242

Id=skupper-controller.service
LoadState=loaded
ActiveState=failed
SubState=failed
Result=exit-code
NRestarts=0
UnitFileState=static
MainPID=0
@@rc 0
@@section containers
[{"Names": ["default-skupper-router"], "State": "running", "ExitCode": 0,
  "Labels": {"application": "skupper-v2"}},
 {"Names": ["ezhang-skupper-controller"], "State": "exited", "ExitCode": 137}]
@@rc 0
@@section router
[{"HostConfig": {"Tmpfs": {"/tmp": "rw,size=10M"}},
  "Config": {"Env": ["SSL_PROFILE_BASE_PATH=/etc/skupper-router"]}}]
@@rc 0
@@file input Site-hub.yaml
apiVersion: skupper.io/v2alpha1
kind: Site
metadata: {name: hub}
spec: {}
@@file runtime Link-link-hub.yaml
kind: Link
metadata: {name: link-hub}
status: {status: Ready, message: OK}
@@boot skupper-default.service
@@rendered
@@issuer 0123456789abcdef
@@section models
{"object": "list", "data": [{"id": "granite"}]}
@@rc 0
@@end
""")


def test_one_read_tells_units_containers_resources_and_models() -> None:
    state = parse_site_state(OUTPUT)
    assert state.complete and state.user == "ezhang" and state.podman_path == "/usr/bin/podman"
    assert str(state.skupper.cli) == "2.1.3"
    router = state.unit("skupper-default.service")
    assert router.active and router.n_restarts == 2 and router.main_pid == 4242
    assert not state.unit("skupper-controller.service").active
    assert state.unit("never-heard-of.service").load_state == "not-found"
    assert state.container_running("default-skupper-router")
    assert not state.container_running("ezhang-skupper-controller")
    assert state.router is not None and state.router.has_tmpfs and state.router.has_ssl_base_path
    assert state.input_resources[("Site", "hub")]["spec"] == {}
    assert state.runtime_resources[("Link", "link-hub")]["status"]["status"] == "Ready"
    assert state.enabled_at_boot == {"skupper-default.service"}
    assert state.rendered and state.issuer == "0123456789abcdef"
    assert state.served_models == ["granite"]


def test_a_read_cut_short_is_incomplete_and_failed_commands_are_reported() -> None:
    state = parse_site_state(
        framed("@@user x\n@@section version\nsh: skupper: not found\n@@rc 127\n")
    )
    assert not state.complete
    assert state.skupper.cli is None and state.skupper.not_installed
    cut = parse_site_state(framed("@@user x\n@@section version\n"))
    # no status read is no verdict: a read cut short never says the CLI is not installed
    assert cut.skupper.cli is None and not cut.skupper.not_installed


def test_the_script_quotes_its_values() -> None:
    script = site_state_script("ns; rm -rf /", "http://127.0.0.1:9000/v1/models")
    # the values are the shipped script's positional parameters, each one word
    body = script.removeprefix(prelude() + "\n")
    arguments = next(line for line in body.splitlines() if line.startswith("set -- "))
    words = shlex.split(arguments)[2:]
    assert words[:2] == ["ns; rm -rf /", "ns; rm -rf /-skupper-router"]
    assert words[12] == "http://127.0.0.1:9000/v1/models"
    assert body.endswith(runnable("state.sh"))
    assert "XDG_RUNTIME_DIR" in script.splitlines()[0]


def test_resources_compare_by_meaning() -> None:
    ra = cr.router_access("hub", 8000, 8001, ["203.0.113.10"])
    rendered = {
        **ra,
        "metadata": {"name": "hub-public", "namespace": "default", "uid": "x"},
        "spec": {
            **ra["spec"],
            "roles": [{"name": "inter-router", "port": "8000"}, {"name": "edge", "port": 8001}],
        },
        "status": {"status": "Ready"},
    }
    assert cr.same(ra, rendered)
    assert not cr.same(
        ra, {**rendered, "spec": {**rendered["spec"], "subjectAlternativeNames": []}}
    )
    target = cr.LinkTarget("hub", "203.0.113.10", 8000, 8001)
    first = cr.link_secret(target, cr.ClientCert(b"CA", b"C1", b"K1"))
    reissued = cr.link_secret(target, cr.ClientCert(b"CA", b"C2", b"K2"))
    assert cr.same(first, reissued)  # same CA: links made before stay valid
    assert not cr.same(first, cr.link_secret(target, cr.ClientCert(b"CA2", b"C1", b"K1")))
    assert first["type"] == "kubernetes.io/tls" and set(first["data"]) == {
        "ca.crt",
        "tls.crt",
        "tls.key",
    }
    assert [e["name"] for e in cr.link(target)["spec"]["endpoints"]] == ["inter-router", "edge"]
    assert "K1" not in repr(cr.ClientCert(b"CA", b"C1", b"K1"))


def test_auto_restart_units_take_skuppers_names_and_restart_on_failure() -> None:
    controller, router = units.site_units("default", "ezhang", "/usr/bin/podman")
    assert controller.name == "skupper-controller.service"  # Skupper's own name
    assert router.name == "skupper-default.service"
    for unit in (controller, router):
        assert "Restart=on-failure" in unit.content
        assert "SuccessExitStatus=143 SIGTERM" in unit.content
        assert "[Install]\nWantedBy=default.target\n" in unit.content  # enabled: back at boot
    assert "start-watch.sh default-skupper-router" in router.content
    script = units.watch_script("/usr/bin/podman")
    assert 'podman wait "$1"' in script and 'exit "${RC:-1}"' in script


def test_the_client_cert_path_is_the_namespace_s_whatever_its_characters() -> None:
    import subprocess

    from skupper_mcp.facts.site_state import client_cert_script

    script = client_cert_script("my ns", "client-x y")
    # the values are the script's positional parameters (``set --``), then ``dir=`` joins them
    lines = [x for x in script.splitlines() if x.startswith(("set -- ", "dir="))]
    assert len(lines) == 2
    shown = subprocess.run(
        ["sh", "-c", f'{lines[0]}; {lines[1]}; printf %s "$dir"'],
        capture_output=True,
        text=True,
        env={"SKMCP_DATA": "/h/.local/share/skupper"},  # what the prelude sets
        check=True,
        timeout=10,
    ).stdout
    assert shown == "/h/.local/share/skupper/namespaces/my ns/runtime/certs/client-x y"


def test_resources_parse_the_same_with_libyaml_as_with_the_python_loader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The C loader is only faster: on every recorded site state it reads the same resources."""
    import yaml

    from skupper_mcp.facts import resource_yaml

    recorded = sorted((Path(__file__).parent / "site_states").glob("*/*.txt"))
    assert recorded
    fast = [parse_site_state(p.read_text()) for p in recorded]
    monkeypatch.setattr(resource_yaml, "_LOADER", yaml.SafeLoader)
    resource_yaml._CACHE.clear()  # or the second reading is the first's copy
    slow = [parse_site_state(p.read_text()) for p in recorded]
    for path, a, b in zip(recorded, fast, slow, strict=True):
        assert a.input_resources == b.input_resources, path
        assert a.runtime_resources == b.runtime_resources, path
        assert a.input_resources or a.runtime_resources or path.parent.name == "fresh", path


def test_a_file_read_again_is_an_equal_document_of_its_own() -> None:
    """A warm status reads the same files again: each read gets its own copy of the document
    (what one caller changes, the next read does not see), a timestamp stays a timestamp."""
    import datetime

    text = framed(
        "@@file runtime Site-s1.yaml\nkind: Site\nmetadata:\n  name: s1\n"
        "status:\n  conditions:\n  - lastTransitionTime: 2026-12-01T10:00:00Z\n"
        "@@file runtime Link-l1.yaml\nkind: Link\nmetadata:\n  name: l1\nspec:\n  cost: 1\n"
        "@@end\n"
    )
    first, second = parse_site_state(text), parse_site_state(text)
    link = first.runtime_resources[("Link", "l1")]
    assert (
        link
        == second.runtime_resources[("Link", "l1")]
        == {
            "kind": "Link",
            "metadata": {"name": "l1"},
            "spec": {"cost": 1},
        }
    )
    link["spec"]["cost"] = 5
    assert parse_site_state(text).runtime_resources[("Link", "l1")]["spec"]["cost"] == 1
    for state in (first, second):
        condition = state.runtime_resources[("Site", "s1")]["status"]["conditions"][0]
        assert isinstance(condition["lastTransitionTime"], datetime.datetime)


@pytest.mark.parametrize(("rc", "exit"), [("7", 7), ("22", 22), ("x", None)])
def test_the_model_probe_s_exit_status_is_kept_for_diagnose(rc: str, exit: int | None) -> None:
    """curl's status tells nothing listening (7) from an HTTP refusal (22): diagnose's
    model-port-closed and model-key-refused read it."""
    failed = OUTPUT.replace(
        '{"object": "list", "data": [{"id": "granite"}]}\n@@rc 0', f"curl: failed\n@@rc {rc}"
    )
    state = parse_site_state(failed)
    assert state.served_models is None and state.models_exit == exit
    assert state.models_error
