# Everything about a podman site in one round trip (facts/site_state.py parses it): each
# value the host chooses on one line (skmcp_one_line: a newline in it would start a marker
# line of its own), every text the host prints framed, so none of it can fake a marker.
# $1 the namespace; $2 its router container; $3 its router unit; $4 the controller unit;
# $5 the podman socket unit; $6 and $7 what the login's user name is followed by in the
# legacy controller unit and in the controller container; $8 the watch script, from $HOME;
# $9 how the Skupper version is read; ${10} how many open keys are listed at most;
# ${11} how many log lines to read (0: none) and ${12} how many bytes of each log;
# ${13} the model endpoint to probe (empty: none) and ${14} how many bytes of its body.
# (some are read only by the commands skmcp_framed evaluates, which name them, quoted, so
# that no value is ever spliced into a command's text)
# shellcheck disable=SC2034
ns=$1 router_container=$2 router_unit=$3 controller_unit=$4 socket_unit=$5
# shellcheck disable=SC2034
legacy_suffix=$6 controller_suffix=$7 watch_script=$8 version_command=$9
max_listed=${10} log_lines=${11} max_log_bytes=${12} model_url=${13} max_model_bytes=${14}
data="$SKMCP_DATA"
nsdir="$data/namespaces/$ns"

# Each file as "@@file TAG NAME" and its lines stuffed, with a tls.key: value (a Secret's
# private key) as "redacted". A name keeps only plain characters: a file name is the
# host's text too, and a newline in it would start a line of its own.
show() {
    tag=$1
    shift
    [ $# -gt 0 ] && awk -v tag="$tag" 'FNR == 1 { name = FILENAME; sub(/.*\//, "", name);
        gsub(/[^A-Za-z0-9._-]/, "?", name); print "@@file " tag " " name }
        /^ *tls\.key:/ { sub(/tls\.key:.*/, "tls.key: redacted") } { print "|" $0 }' "$@"
}

# The resources of these kinds in a directory, in kind order; only the kinds the product
# reads: runtime/resources also holds the site's Secrets (private keys) and Certificates,
# which never leave the host (site_state.go MarshalSiteState). One awk for each group of
# files: a hub with N providers has about 3N of them.
show_kinds() {
    tag=$1 dir=$2
    shift 2
    for k in "$@"; do
        for f in "$dir/$k"-*.yaml; do
            [ -f "$f" ] && set -- "$@" "$f"
        done
        shift
    done
    show "$tag" "$@"
}

skmcp_read_state() {
    user="$(id -un | skmcp_one_line)"
    echo "@@user $user"
    echo "@@now $(date +%s | skmcp_one_line)"
    echo "@@podman $({ command -v podman || true; } | skmcp_one_line)"
    # skupper says a missing namespace on stderr: its version reads both streams
    echo "@@section version"
    skmcp_framed -j "$version_command"
    echo "@@section units"
    skmcp_framed "\$SKMCP_CTL show -p Id,LoadState,ActiveState,SubState,Result,NRestarts,\
UnitFileState,MainPID,ExecMainCode,ExecMainStatus \"\$router_unit\" \"\$controller_unit\" \
\"\$socket_unit\" \"\$user\$legacy_suffix\""
    echo "@@section containers"
    skmcp_framed "podman ps -a --format json"
    echo "@@section router"
    skmcp_framed "podman inspect \"\$router_container\" 2>/dev/null"
    # Secrets (link client keys) lose their private key first (show)
    show_kinds input "$nsdir/input/resources" Site RouterAccess Listener MultiKeyListener Connector Link Secret
    show_kinds runtime "$nsdir/runtime/resources" Site RouterAccess Listener MultiKeyListener Connector Link
    ud="$SKMCP_UNITS"
    for u in "$router_unit" "$controller_unit" "$user$legacy_suffix"; do
        [ -f "$ud/$u" ] && { echo "@@file unit $u"; sed 's/^/|/' "$ud/$u"; echo; }
        [ -e "$ud/default.target.wants/$u" ] && echo "@@boot $u"
    done
    f="$HOME/$watch_script"
    [ -f "$f" ] && { echo "@@file watch start-watch.sh"; sed 's/^/|/' "$f"; echo; }
    # the login's uid (whom the router must run as) and the keys others may read
    echo "@@keys $(id -u)"
    skmcp_open_keys "$nsdir" "$max_listed" | sed 's/^/|/'
    [ -d "$nsdir/runtime/resources" ] && echo "@@rendered"
    ca="$nsdir/runtime/issuers/skupper-site-ca/ca.crt"
    [ -f "$ca" ] && echo "@@issuer $(sha256sum < "$ca" | cut -c1-16)"
    # the first certificate files the router's uid cannot read, with their modes; the
    # names NUL-terminated and each printed on one stuffed line (a name may hold a newline)
    p=""
    [ -d "$nsdir/runtime/certs" ] && p="$(find "$nsdir/runtime/certs" -type f ! -perm -o+r \
        -printf '%m runtime/certs/%P\0' 2>/dev/null | tr '\n\000' '?\n' |
        LC_ALL=C sed 's,[^A-Za-z0-9._/ +-],?,g; s/^/|/' | head -n 3)"
    [ -n "$p" ] && { echo "@@certs-private"; echo "$p"; }
    if [ "$log_lines" -gt 0 ]; then
        # a container's stderr is its log too (logs.sh)
        echo "@@section log-router"
        skmcp_framed -j -l "$max_log_bytes" "podman logs --tail $log_lines \"\$router_container\""
        echo "@@section log-controller"
        skmcp_framed -j -l "$max_log_bytes" \
            "podman logs --tail $log_lines \"\$user\$controller_suffix\""
    fi
    if [ -n "$model_url" ]; then
        echo "@@section models"
        skmcp_framed -f "$max_model_bytes" "curl -fsS --max-time 2 \"\$model_url\""
    fi
    echo "@@end"
}

# Held until it ends, then written in one go (skmcp_at_once): each echo and each tool
# writes on its own, and the SSH server sends each write as a packet (about forty for a
# site, a third of a warm status's CPU at 32 providers).
skmcp_at_once skmcp_read_state
