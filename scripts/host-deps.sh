#!/bin/sh
# What the end-to-end suite needs from the machine, installed when missing: OpenSSH's sshd
# (the sandbox's OpenSSH hosts), iptables (its faults), curl (the hosts' curl shim), a C
# compiler (the hosts' command client: emulated commands at the cost of real ones), Chromium
# (the browser tests drive it headless to look at the VAN view), podman with runc and uidmap
# (the sandbox's real-podman hosts), the login shells the
# scripts are tested under (also the sandbox's `--host-quirk HOST=shell=NAME` hosts) and the
# script linter. A real skupper-router ($SKMCP_SKUPPER_ROUTER) brings its own libraries:
# its installer's business.
# As root it installs them with apt-get; otherwise it names what to install and fails.
# POSIX sh, like every script of the repository (shellcheck -s sh reads them all).
set -eu

need=""
want() { need="$need $*"; }
[ -x /usr/sbin/sshd ] || want openssh-server
command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables ] || want iptables
command -v curl >/dev/null 2>&1 || want curl
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || want gcc libc6-dev
command -v chromium >/dev/null 2>&1 || want chromium
# the login shells the scripts are tested under (tests/test_login_shells.py), and the linter
# make lint runs over every shell script
for login_shell in zsh fish tcsh; do
    command -v "$login_shell" >/dev/null 2>&1 || want "$login_shell"
done
command -v shellcheck >/dev/null 2>&1 || want shellcheck
# real podman for the sandbox's hosts (`skupper-sandbox up --podman real`): runc, as crun
# refuses hybrid cgroups; uidmap for rootless users' /etc/subuid ranges. The sandbox writes
# each host's podman configuration itself (skupper_sandbox.real_podman) and never touches
# the machine's /etc/containers.
[ -x /usr/bin/podman ] || want podman
command -v runc >/dev/null 2>&1 || want runc
command -v newuidmap >/dev/null 2>&1 || want uidmap
need=${need# }

if [ -n "$need" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "The test suite needs: $need. Install them first, e.g.:" >&2
        echo "  sudo apt-get install -y $need && sudo mkdir -p /run/sshd" >&2
        exit 1
    fi
    echo "installing $need (needed by the end-to-end suite)" >&2
    apt-get update -qq
    # $need is a list of package names, one word each: split on purpose
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi

# OpenSSH's privilege-separation directory; there is no systemd to make it.
if [ ! -d /run/sshd ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "sshd needs /run/sshd: sudo mkdir -p /run/sshd" >&2
        exit 1
    fi
    mkdir -p /run/sshd
    chmod 755 /run/sshd
fi
