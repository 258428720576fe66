# A podman site's facts for the precheck, framed (facts/precheck.py parses it): every line
# the host prints is stuffed, after a marker of ours.
# $1: the Skupper namespace; $2: 1 to add the listening TCP sockets and the ports our router
# is configured for (the local site); $3: the command that prints Skupper's version; $4: the
# podman socket unit; $5: how many open key files to list at most.
ns=$1 with_ports=$2 version_command=$3 socket_unit=$4 max_keys=$5
if command -v podman >/dev/null 2>&1; then
    echo "@@section podman"
    skmcp_framed "podman --version"
else
    echo "@@podman-missing"
fi
if command -v skupper >/dev/null 2>&1; then
    # skupper says a missing namespace on stderr: both streams are its answer
    echo "@@section skupper"
    skmcp_framed -j "$version_command"
else
    echo "@@skupper-missing"
fi
echo "@@section systemd"
skmcp_framed -j "\$SKMCP_CTL show --property=LoadState podman.socket"
echo "@@podman-socket $($SKMCP_CTL is-active "$socket_unit" 2>/dev/null | skmcp_one_line)"
# root runs Skupper under the system manager: lingering does not apply
if [ "$(id -u)" = 0 ]; then
    echo "@@root"
elif command -v loginctl >/dev/null 2>&1; then
    echo "@@section linger"
    # shellcheck disable=SC2016 # expanded where skmcp_framed runs it
    skmcp_framed -j 'loginctl show-user "$(id -un)" --property=Linger'
else
    echo "@@linger-missing"
fi
# the distribution, for an install hint in the host's own package manager
echo "@@section os-release"
grep -E '^(ID|ID_LIKE)=' /etc/os-release 2>/dev/null | sed 's/^/|/'
nsdir="$SKMCP_DATA/namespaces/$ns"
echo "@@section open-keys"
skmcp_open_keys "$nsdir" "$max_keys" | sed 's/^/|/'
if [ "$with_ports" = 1 ]; then
    echo "@@section listen"
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" { print "|" $2 }'
    echo "@@section router-ports"
    cfg="$nsdir/runtime/router/skrouterd.json"
    if [ -f "$cfg" ]; then
        grep -oE '"port": *"?[0-9]+' "$cfg" | grep -oE '[0-9]+$' | sed 's/^/|/'
    fi
fi
echo "@@end"
