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
echo "@@journal"
# podman matches the container's full id (libpod/container_log_linux.go readFromJournal):
# the name alone would also find an earlier container of the same name
if [ -n "$id" ]; then
    skmcp_framed -l "$max_bytes" \
        "journalctl $scope --no-pager -q -o cat -n $lines CONTAINER_NAME=\"\$c\" CONTAINER_ID_FULL=$id"
else
    skmcp_framed -l "$max_bytes" "journalctl $scope --no-pager -q -o cat -n $lines CONTAINER_NAME=\"\$c\""
fi
