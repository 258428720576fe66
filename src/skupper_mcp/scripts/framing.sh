# The framing every script's output keeps (skupper_mcp/facts/framing.py says why): a line
# of the host's text is printed stuffed ("|" in front), so it can never start a marker line.
# Defined before every script the product sends (connectors/shell.py script()).

# skmcp_framed [-j] [-f BYTES | -l BYTES] COMMAND
# Run COMMAND (shell text, in a subshell); print its stdout stuffed, then "@@stderr" and its
# stderr stuffed when it wrote any (its last SKMCP_MAX_STDERR bytes), then "@@rc N", its own
# exit status. -j keeps stderr in stdout, in the order written (a log's lines); -f/-l send
# only the first/last BYTES of stdout. Stuffed stdout goes out on descriptor 4, the script's
# own; stderr (descriptor 5) and then the status (descriptor 3, around the pipe: POSIX sh
# has no pipefail) go into one substitution, from which the status is taken back as the
# trailing digits. A state read runs this for each of its commands, and what a read spawns
# is most of what a warm status costs a host: it costs one sed and no other process (a cut
# adds its head or tail, a stderr that was written its sed). The echo ends a last line that
# had no newline.
SKMCP_MAX_STDERR=16384

skmcp_framed() {
    skmcp_err_fd=5 skmcp_cut=
    while [ $# -gt 1 ]; do
        case $1 in
            -j) skmcp_err_fd=1; shift ;;
            -f) skmcp_cut=head skmcp_cut_bytes=$2; shift 2 ;;
            -l) skmcp_cut=tail skmcp_cut_bytes=$2; shift 2 ;;
            *) break ;;
        esac
    done
    if [ -n "$skmcp_cut" ]; then
        { skmcp_e=$( { skmcp_run "$1" | "$skmcp_cut" -c "$skmcp_cut_bytes" | sed 's/^/|/' >&4
            } 3>&1 5>&1 ); } 4>&1
    else
        { skmcp_e=$( { skmcp_run "$1" | sed 's/^/|/' >&4; } 3>&1 5>&1 ); } 4>&1
    fi
    skmcp_rc=${skmcp_e##*[!0-9]}
    skmcp_e=${skmcp_e%?"$skmcp_rc"}
    echo
    if [ -n "$skmcp_e" ]; then
        # held whole while the command ran (as skmcp_at_once holds stdout), sent cut
        if [ ${#skmcp_e} -gt "$SKMCP_MAX_STDERR" ]; then
            skmcp_e=$(printf %s "$skmcp_e" | tail -c "$SKMCP_MAX_STDERR")
        fi
        echo "@@stderr"
        printf '%s\n' "$skmcp_e" | sed 's/^/|/'
    fi
    echo "@@rc $skmcp_rc"
}

# skmcp_run COMMAND: the framed command in a subshell (an exit in it, or a builtin killed by
# the cut's SIGPIPE, still leaves a status to report) with its stderr on $skmcp_err_fd, then
# a newline and its status on descriptor 3.
skmcp_run() {
    ( eval "$1" ) 2>&"$skmcp_err_fd" 3>&- 4>&- 5>&-
    printf '\n%s' "$?" >&3
}

# Its input made one line, for a marker's argument: lines joined with "?" (which no checked
# value holds, so a value that had a newline is refused, never cut to a plausible first
# line) and no newline at the end.
skmcp_one_line() {
    awk 'NR > 1 { printf "?" } { printf "%s", $0 }'
}

# skmcp_mark TAG VALUE: the marker line "@@TAG VALUE", VALUE made one line as skmcp_one_line
# would make it, without a process: a VALUE of many lines becomes its first line and "?",
# which the parser refuses as skmcp_one_line's joined lines.
skmcp_mark() {
    case $2 in
        *"$SKMCP_NL"*) printf '@@%s %s?\n' "$1" "${2%%"$SKMCP_NL"*}" ;;
        *) printf '@@%s %s\n' "$1" "$2" ;;
    esac
}
SKMCP_NL='
'

# skmcp_at_once BODY: run BODY (shell text) with its output held until it ends, then
# written in one go: an SSH server sends each write as a packet of its own. The trailing
# "." keeps the newlines a command substitution would strip.
skmcp_at_once() {
    skmcp_out=$(eval "$1"; echo .)
    printf %s "${skmcp_out%.}"
}
