# The router's own status of its connectors, from its management: skmanage (shipped in the
# skupper-router image) queries the connector entity, whose connectionStatus and
# connectionMsg (python/skupper_router/management/skrouter.json@3.4.2) keep a connector's
# last failure while it retries, where the log has it only once (src/adaptors/amqp/
# qd_connector.c@3.4.2:416-431). A podman site's management listener is
# skupper-local-normal (role normal) on 127.0.0.1, TLS with the site's skupper-local-client certificate
# (internal/nonkube/controller/router_state_handler.go@2.1.3:174,235), mounted in the
# container under /etc/skupper-router/runtime/certs (bundle/site_state_renderer.go@2.1.3).
# $1: the namespace; $2: the router container; $3: how many bytes at most.
# shellcheck disable=SC2034 # c, url and certs: read by the framed command's eval
ns=$1 c=$2 max_bytes=$3
cfg="$SKMCP_DATA/namespaces/$ns/runtime/router/skrouterd.json"
port=
if [ -f "$cfg" ]; then
    # the listener of role normal (Skupper names it skupper-local-normal), one per line
    port=$(tr -d ' \n\t' < "$cfg" | tr '}' '\n' | grep -F '"role":"normal"' \
        | grep -oE '"port":"?[0-9]+' | grep -oE '[0-9]+$' | head -n 1)
fi
if [ -z "$port" ]; then
    echo "@@no-management"
    exit 0
fi
url="amqps://127.0.0.1:$port"
certs=/etc/skupper-router/runtime/certs/skupper-local-client
echo "@@connectors"
skmcp_framed -f "$max_bytes" \
    "podman exec \"\$c\" skmanage -b \"\$url\" -t 5 --ssl-certificate \"\$certs/tls.crt\" --ssl-key \"\$certs/tls.key\" --ssl-trustfile \"\$certs/ca.crt\" query --type=connector"
