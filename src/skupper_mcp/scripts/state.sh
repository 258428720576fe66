# Everything about a podman site in one round trip (facts/site_state.py parses it): each
# value the host chooses on one line (skmcp_mark: a newline in it would start a marker
# line of its own), every text the host prints framed, so none of it can fake a marker.
# $1 the namespace; $2 its router container; $3 its router unit; $4 the controller unit;
# $5 the podman socket unit; $6 and $7 what the login's user name is followed by in the
# legacy controller unit and in the controller container; $8 the watch script, from $HOME;
# $9 how the Skupper version is read; ${10} how many open keys are listed at most;
# ${11} how many log lines to read (0: none) and ${12} how many bytes of each log;
# ${13} the model endpoint to probe (empty: none) and ${14} how many bytes of its body;
# ${15} the router container's name as a URL path segment; ${16} the key of the skupper
# binary whose version the engine holds (empty: none).
# ${17} the host's other model endpoints (several per host), separated by spaces, each
# read as the first is, in a section of its own (models-1, models-2 ...).
# (some are read only by the commands skmcp_framed evaluates, which name them, quoted, so
# that no value is ever spliced into a command's text)
# shellcheck disable=SC2034
ns=$1 router_container=$2 router_unit=$3 controller_unit=$4 socket_unit=$5
# shellcheck disable=SC2034
legacy_suffix=$6 controller_suffix=$7 watch_script=$8 version_command=$9
max_listed=${10} log_lines=${11} max_log_bytes=${12} model_url=${13} max_model_bytes=${14}
router_segment=${15} known_skupper=${16} more_model_urls=${17:-}
data="$SKMCP_DATA"
nsdir="$data/namespaces/$ns"

# Each file after a "tag=TAG" operand as "@@file TAG NAME" and its lines stuffed, with a
# resource's tls.key: value (a Secret's private key) as "redacted". A name keeps only plain
# characters: a file name is the host's text too, and a newline in it would start a line of
# its own. One awk reads every file the read sends (awk sets tag before the files after
# it): each process a read starts is host CPU a warm status spends. A certificate is named
# by its place too: issuers/NAME/FILE or certs/NAME/FILE. (No comment inside the awk
# program: the product sends scripts without their comment lines, and one inside a quoted
# text is part of that text, shell.runnable.)
skmcp_show_files() {
    awk 'FNR == 1 { name = FILENAME; sub(/.*\//, "", name);
        gsub(/[^A-Za-z0-9._-]/, "?", name)
        if (tag == "cert") { n = split(FILENAME, p, "/"); d = p[n - 1]; k = p[n - 2];
            gsub(/[^A-Za-z0-9._-]/, "?", d); name = k "/" d "/" name }
        print "@@file " tag " " name }
        tag ~ /^(input|runtime)$/ && /^ *tls\.key:/ { sub(/tls\.key:.*/, "tls.key: redacted") }
        { print "|" $0 }' "$@" </dev/null
}

# The podman API's answers (libpod's GET /containers/json?all=true, which podman ps -a
# --format json prints, and GET /containers/NAME/json, the object podman inspect lists) as
# the section podman-api, each answer followed by a line "@http CODE"; a status other
# than 0 when there is no socket, CONTAINER_HOST or CONTAINER_CONNECTION sends podman to
# another service (podman-remote's variables: the local socket is then not what podman
# says), or the service did not answer both (the list 200, the router 200 or 404). No
# line of podman's JSON can start with "@": it is the encoder's one line, a newline in a
# string escaped.
skmcp_podman_api() {
    [ -z "${CONTAINER_HOST:-}${CONTAINER_CONNECTION:-}" ] && command -v curl >/dev/null 2>&1 ||
        return 1
    if [ "$SKMCP_UID" = 0 ]; then
        api_socket=/run/podman/podman.sock
    else
        api_socket="$XDG_RUNTIME_DIR/podman/podman.sock"
    fi
    [ -S "$api_socket" ] || return 1
    api=$(curl -sS --max-time 5 --unix-socket "$api_socket" -w '\n@http %{http_code}\n' \
        "http://d/v4.0.0/libpod/containers/json?all=true" \
        "http://d/v4.0.0/libpod/containers/$router_segment/json" 2>/dev/null) || return 1
    api_list=${api#*"$SKMCP_NL@http "}
    api_list=${api_list%%"$SKMCP_NL"*}
    api_router=${api##*"$SKMCP_NL@http "}
    [ "$api_list" = 200 ] && { [ "$api_router" = 200 ] || [ "$api_router" = 404 ]; } ||
        return 1
    echo "@@section podman-api"
    printf '%s\n' "$api" | sed 's/^/|/'
    echo "@@rc 0"
}

skmcp_read_state() {
    user="$(id -un)"
    skmcp_mark user "$user"
    skmcp_mark now "$(date +%s)"
    # the kernel's boot id, new at each boot (the shell's read: no process of its own)
    boot_id=""
    { read -r boot_id < /proc/sys/kernel/random/boot_id; } 2>/dev/null
    skmcp_mark boot-id "$boot_id"
    skmcp_mark podman "$(command -v podman)"
    # skupper version only when the binary is not the one the engine knows: its path, and
    # its target's device, inode, size and change and modify times (a replaced or rewritten
    # binary differs in one), cost one stat rather than a Go program's start
    sk="$(command -v skupper)"
    key=""
    case $sk in
        /*) key="$(stat -L -c '%d:%i %s %Y %Z' -- "$sk" 2>/dev/null)" && key="$sk $key" ;;
    esac
    [ -n "$key" ] && skmcp_mark skupper-key "$key"
    if [ -n "$key" ] && [ "$key" = "$known_skupper" ]; then
        echo "@@skupper-known"
    else
        # skupper says a missing namespace on stderr: its version reads both streams
        echo "@@section version"
        skmcp_framed -j "$version_command"
    fi
    echo "@@section units"
    skmcp_framed "\$SKMCP_CTL show -p Id,LoadState,ActiveState,SubState,Result,NRestarts,\
UnitFileState,MainPID,ExecMainCode,ExecMainStatus \"\$router_unit\" \"\$controller_unit\" \
\"\$socket_unit\" \"\$user\$legacy_suffix\""
    # whether the user lingers, read as Skupper reads it (logind's file: loginctl needs a
    # session or linger to answer at all); root runs Skupper under the system manager
    if [ "$SKMCP_UID" != 0 ]; then
        echo "@@section linger"
        skmcp_framed "if [ -e \"/var/lib/systemd/linger/\$user\" ]; then echo Linger=yes; \
else echo Linger=no; fi"
    fi
    # the containers and the router's inspect from the podman API socket where a podman
    # service serves it (one curl, two requests), else from podman itself (a process each)
    skmcp_podman_api || {
        echo "@@section containers"
        skmcp_framed "podman ps -a --format json"
        echo "@@section router"
        skmcp_framed "podman inspect \"\$router_container\" 2>/dev/null"
    }
    # every file in one awk (skmcp_show_files), after its tag; Secrets lose their private
    # key there. Only the kinds the product reads: runtime/resources also holds the site's
    # Secrets (private keys) and Certificates, which never leave the host (site_state.go
    # MarshalSiteState). The paths are absolute, so awk never takes one for an assignment.
    set -- tag=input
    for k in Site RouterAccess Listener MultiKeyListener Connector Link Secret; do
        for f in "$nsdir/input/resources/$k"-*.yaml; do [ -f "$f" ] && set -- "$@" "$f"; done
    done
    set -- "$@" tag=runtime
    for k in Site RouterAccess Listener MultiKeyListener Connector Link; do
        for f in "$nsdir/runtime/resources/$k"-*.yaml; do [ -f "$f" ] && set -- "$@" "$f"; done
    done
    set -- "$@" tag=unit
    ud="$SKMCP_UNITS"
    # an empty file gives awk no line to name it by: its marker is printed here
    for u in "$router_unit" "$controller_unit" "$user$legacy_suffix"; do
        [ -s "$ud/$u" ] && set -- "$@" "$ud/$u"
        [ -f "$ud/$u" ] && [ ! -s "$ud/$u" ] && echo "@@file unit $u"
    done
    # the certificates' public halves (never a tls.key): when each ends (facts/certificates.py)
    set -- "$@" tag=cert
    for f in "$nsdir"/runtime/issuers/*/tls.crt "$nsdir"/runtime/certs/*/tls.crt \
        "$nsdir"/runtime/certs/*/ca.crt; do
        [ -f "$f" ] && set -- "$@" "$f"
    done
    f="$HOME/$watch_script"
    [ -s "$f" ] && set -- "$@" tag=watch "$f"
    [ -f "$f" ] && [ ! -s "$f" ] && echo "@@file watch start-watch.sh"
    skmcp_show_files "$@"
    for u in "$router_unit" "$controller_unit" "$user$legacy_suffix"; do
        [ -e "$ud/default.target.wants/$u" ] && echo "@@boot $u"
    done
    # the login's uid (whom the router must run as: asked once, in the prelude) and the
    # keys others may read
    echo "@@keys $SKMCP_UID"
    skmcp_open_keys "$nsdir" "$max_listed" | sed 's/^/|/'
    [ -d "$nsdir/runtime/resources" ] && echo "@@rendered"
    ca="$nsdir/runtime/issuers/skupper-site-ca/ca.crt"
    # the digest's first 16 characters, cut by the shell rather than by one more process
    [ -f "$ca" ] && h="$(sha256sum < "$ca")" && echo "@@issuer ${h%"${h#????????????????}"}"
    # the first certificate files the router's uid cannot read, with their modes; the
    # names NUL-terminated and each printed on one stuffed line (a name may hold a newline)
    p=""
    [ -d "$nsdir/runtime/certs" ] && p="$(find "$nsdir/runtime/certs" -type f ! -perm -o+r \
        -printf '%m runtime/certs/%P\0' 2>/dev/null | tr '\n\000' '?\n' |
        LC_ALL=C sed 's,[^A-Za-z0-9._/ +-],?,g; s/^/|/; 3q')"
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
    n=0
    for model_url in $more_model_urls; do
        n=$((n + 1))
        echo "@@section models-$n"
        skmcp_framed -f "$max_model_bytes" "curl -fsS --max-time 2 \"\$model_url\""
    done
    echo "@@end"
}

# Held until it ends, then written in one go (skmcp_at_once): each echo and each tool
# writes on its own, and the SSH server sends each write as a packet (about forty for a
# site, a third of a warm status's CPU at 32 providers).
skmcp_at_once skmcp_read_state
