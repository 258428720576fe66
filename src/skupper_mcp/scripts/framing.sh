# The framing every script's output keeps (skupper_mcp/facts/framing.py says why): a line
# of the host's text is printed stuffed ("|" in front), so it can never start a marker line.
# Defined before every script the product sends (connectors/shell.py script()).

# skmcp_framed [-j] [-f BYTES | -l BYTES] COMMAND
# Run COMMAND (shell text, in a subshell); print its stdout stuffed, then "@@stderr" and its
# stderr stuffed when it wrote any (its last SKMCP_MAX_STDERR bytes), then "@@rc N", its own
# exit status. -j keeps stderr in stdout, in the order written (a log's lines); -f/-l send
# only the first/last BYTES of stdout. The status travels on descriptor 3 around the pipe
# (POSIX sh has no pipefail), then after stderr into the same substitution (descriptor 5),
# from which it is taken back as the trailing digits; stuffed stdout goes out on
# descriptor 4, the script's own. The echo ends a last line that had no newline.
SKMCP_MAX_STDERR=16384

skmcp_framed() {
    skmcp_err_fd=5 skmcp_cut=cat skmcp_cut_bytes=0
    while [ $# -gt 1 ]; do
        case $1 in
            -j) skmcp_err_fd=1; shift ;;
            -f) skmcp_cut=head skmcp_cut_bytes=$2; shift 2 ;;
            -l) skmcp_cut=tail skmcp_cut_bytes=$2; shift 2 ;;
            *) break ;;
        esac
    done
    { skmcp_e=$( { skmcp_rc=$( { { ( eval "$1" ) 2>&"$skmcp_err_fd" 3>&- 4>&- 5>&-;
        echo $? >&3; } | skmcp_cut | sed 's/^/|/' >&4; } 3>&1 ); echo; echo "$skmcp_rc"; } 5>&1 |
        tail -c "$SKMCP_MAX_STDERR" ); } 4>&1
    skmcp_rc=${skmcp_e##*[!0-9]}
    skmcp_e=${skmcp_e%"$skmcp_rc"}
    echo
    if [ ${#skmcp_e} -gt 1 ]; then
        echo "@@stderr"
        printf %s "$skmcp_e" | sed 's/^/|/'
    fi
    echo "@@rc $skmcp_rc"
}

skmcp_cut() {
    case $skmcp_cut in
        head) head -c "$skmcp_cut_bytes" ;;
        tail) tail -c "$skmcp_cut_bytes" ;;
        *) cat ;;
    esac
}

# Its input made one line, for a marker's argument: lines joined with "?" (which no checked
# value holds, so a value that had a newline is refused, never cut to a plausible first
# line) and no newline at the end.
skmcp_one_line() {
    awk 'NR > 1 { printf "?" } { printf "%s", $0 }'
}

# skmcp_at_once BODY: run BODY (shell text) with its output held until it ends, then
# written in one go: an SSH server sends each write as a packet of its own. The trailing
# "." keeps the newlines a command substitution would strip.
skmcp_at_once() {
    skmcp_out=$(eval "$1"; echo .)
    printf %s "${skmcp_out%.}"
}
