# Withdraw a routing key from the network without stopping the router: delete, through the
# router's management, every tcpConnector the running router holds for the key. skrouterd
# closes the connector's out-link, so the address has no local destination and its
# withdrawal reaches every other router on the mobile-address sync's next one-second tick,
# with no hold (src/adaptors/tcp/tcp_adaptor.c@3.5.1:2610-2650 qd_dispatch_delete_tcp_connector,
# src/router_core/modules/mobile_sync/mobile.c@3.5.1:451-470,940-957; the same @3.4.2). It
# is what Skupper's own system adaptor does to a running router when a Connector goes with
# SKUPPER_SYSTEM_RELOAD_TYPE=auto (internal/nonkube/controller/system_adaptor.go@2.2.1:29-56);
# the rendered skrouterd.json is left as it is, so the next start of the router has the
# connector again. The tcpConnector's name is read from that file (Skupper names it
# <connector>@<host>, after "connector/" from 2.2.0). The listener and the certificate:
# management.sh.
# $1: the namespace; $2: the router container; $3: the routing key; $4: bytes at most of
# each command's answer; $5: how many tcpConnectors at most to delete.
# shellcheck disable=SC2034,SC2154 # name: read by the framed command's eval; skmcp_flat: management.sh
ns=$1 c=$2 key=$3 max_bytes=$4 most=$5
if ! skmcp_management "$ns" "$c"; then
    echo "@@no-management"
    exit 0
fi
# every tcpConnector's name for the key; "@@found N" says how many, of which the first
# $most are deleted, and "@@end" that the script ran to its end (an answer without
# it was cut, and more may have been deleted than it names)
all=$(printf '%s\n' "$skmcp_flat" | grep -F '"tcpConnector",{' | grep -F "\"address\":\"$key\"" \
    | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
if [ -z "$all" ]; then
    echo "@@no-connector"
    exit 0
fi
echo "@@found $(printf '%s\n' "$all" | wc -l | tr -d ' ')"
# the connections open through each tcpConnector, right before the deletes close them:
# connectionsOpened - connectionsClosed - 1 (src/adaptors/tcp/tcp_adaptor.c@3.5.1:401-409,
# 2747-2765; the tcpConnection entity is never filled at 3.4.2 or 3.5.1)
echo "@@connections"
skmcp_framed -f "$max_bytes" "skmcp_skmanage query --type=tcpConnector name connectionsOpened connectionsClosed"
printf '%s\n' "$all" | head -n "$most" | while IFS= read -r name; do
    skmcp_mark delete "$name"
    skmcp_framed -f "$max_bytes" "skmcp_skmanage delete --type=tcpConnector --name=\"\$name\""
done
echo "@@end"
