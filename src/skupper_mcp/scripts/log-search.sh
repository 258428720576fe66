# The last lines of a container's whole log that hold a fixed string, framed (facts/logs.py
# parses it): for a line skrouterd writes once (a connector's failure is logged only when
# its message changes), which a tail of the log may no longer hold. The log is read on the
# host; only the matching lines cross, bounded. Both places a log may be: podman logs, and
# the journal (podman's journald log driver).
# $1: the container; $2: the string; $3: how many lines; $4: how many bytes at most.
# shellcheck disable=SC2034 # c and needle: read by the framed command's eval
c=$1 needle=$2 n=$3 max_bytes=$4
uid=$(id -u)
scope=--user
[ "$uid" = 0 ] && scope=
# the journal's lines of this container as podman matches them: its full id and the uid
id=$(podman container inspect --format '{{.Id}}' "$c" 2>/dev/null)
case $id in
    "" | *[!0-9a-f]*) match="CONTAINER_NAME=\"\$c\"" ;;
    *) match="CONTAINER_ID_FULL=$id" ;;
esac
echo "@@matches"
skmcp_framed -l "$max_bytes" \
    "{ podman logs \"\$c\" 2>&1; journalctl $scope -q -o cat $match _UID=$uid 2>/dev/null; } | grep -F -e \"\$needle\" | tail -n $n"
