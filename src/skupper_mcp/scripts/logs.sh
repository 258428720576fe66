# The last lines of a podman container's log, framed (facts/logs.py parses it).
# $1: how many lines; $2: how many bytes to send at most; $3: the container, or empty for
# the login user's system controller, whose name is the user's followed by $4.
lines=$1 max_bytes=$2 c=$3
if [ -z "$c" ]; then
    c="$(id -un | skmcp_one_line)$4"
fi
echo "@@container $c"
podman container exists "$c" >/dev/null 2>&1
e=$?
echo "@@exists $e"
[ "$e" = 0 ] || exit 0
echo "@@logs"
# podman writes the container's stderr lines to its own stderr (libpod LogLine.Write), and
# its own warnings there too (libpod's cgroups-v1 one on many hosts): stderr is a frame of
# its own, as large as the log's, and facts/logs.py tells podman's lines from the log's
# shellcheck disable=SC2034 # read by skmcp_framed (framing.sh)
SKMCP_MAX_STDERR=$max_bytes
skmcp_framed -l "$max_bytes" "podman logs --tail $lines \"\$c\""
