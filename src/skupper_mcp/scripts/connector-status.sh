# The router's own status of its connectors, from its management: skmanage queries the
# connector entity, whose connectionStatus and connectionMsg
# (python/skupper_router/management/skrouter.json@3.4.2) keep a connector's last failure
# while it retries, where the log has it only once (src/adaptors/amqp/
# qd_connector.c@3.4.2:416-431). The listener and the certificate: management.sh.
# $1: the namespace; $2: the router container; $3: how many bytes at most.
ns=$1 c=$2 max_bytes=$3
if ! skmcp_management "$ns" "$c"; then
    echo "@@no-management"
    exit 0
fi
echo "@@connectors"
skmcp_framed -f "$max_bytes" "skmcp_skmanage query --type=connector"
