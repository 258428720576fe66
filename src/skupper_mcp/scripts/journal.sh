# The journal's lines of a podman container, for a container whose podman logs printed
# nothing: podman's journald log driver keeps them in the journal, and journalctl may show
# them where podman cannot (facts/logs.py parses this). Framed.
# $1: how many lines; $2: how many bytes to send at most; $3: the container.
lines=$1 max_bytes=$2 c=$3
info=$(podman container inspect --format '{{.Id}} {{.HostConfig.LogConfig.Type}}' "$c" 2>/dev/null)
echo "@@inspect"
printf '%s\n' "$info" | head -c 512 | sed 's/^/|/'
id=${info%% *}
case $id in
    "" | *[!0-9a-f]*) id= ;;
esac
# a rootless container's lines are the user's journal; root's are the system's
scope=--user
[ "$(id -u)" = 0 ] && scope=
uid=$(id -u)
echo "@@journal"
# podman matches the container's full id and the user's uid, never the name (libpod/
# container_log_linux.go@v5.8.2:50-100 readFromJournal; _UID from v4.4.0): the name would
# also find an earlier container of that name, and miss this one's lines from before a
# rename (conmon wrote the name it had then)
if [ -n "$id" ]; then
    skmcp_framed -l "$max_bytes" \
        "journalctl $scope --no-pager -q -o cat -n $lines CONTAINER_ID_FULL=$id _UID=$uid"
else
    skmcp_framed -l "$max_bytes" \
        "journalctl $scope --no-pager -q -o cat -n $lines CONTAINER_NAME=\"\$c\" _UID=$uid"
fi
