# The router's management, asked from inside its container: one source for the scripts that
# use it (connector-status.sh, drain.sh). A podman site's management listener is
# skupper-local-normal (role normal) on 127.0.0.1, TLS with the site's skupper-local-client
# certificate (internal/nonkube/controller/router_state_handler.go@2.1.3:174,235), mounted in
# the container under /etc/skupper-router/runtime/certs (bundle/site_state_renderer.go@2.1.3);
# skmanage is shipped in the skupper-router image. Its connection options are
# python/skupper_router_internal/tools/command.py@3.4.2:96-122's.

# skmcp_management NAMESPACE CONTAINER: find the management listener in the site's rendered
# skrouterd.json. Sets skmcp_flat (the config, one entity a line: "}" ends each entity's
# attributes), skmcp_url and skmcp_router; returns 1 when the config names no listener of
# role normal (or there is no config).
skmcp_management() {
    skmcp_cfg="$SKMCP_DATA/namespaces/$1/runtime/router/skrouterd.json"
    skmcp_router=$2 skmcp_flat='' skmcp_url=''
    [ -f "$skmcp_cfg" ] || return 1
    skmcp_flat=$(tr -d ' \n\t' < "$skmcp_cfg" | tr '}' '\n')
    skmcp_port=$(printf '%s\n' "$skmcp_flat" | grep -F '"role":"normal"' \
        | grep -oE '"port":"?[0-9]+' | grep -oE '[0-9]+$' | head -n 1)
    [ -n "$skmcp_port" ] || return 1
    skmcp_url="amqps://127.0.0.1:$skmcp_port"
}

# skmcp_skmanage ARGS...: skmanage in the router container, on the management listener
# skmcp_management found, with the local client certificate.
skmcp_skmanage() {
    skmcp_certs=/etc/skupper-router/runtime/certs/skupper-local-client
    podman exec "$skmcp_router" skmanage -b "$skmcp_url" -t 5 \
        --ssl-certificate "$skmcp_certs/tls.crt" --ssl-key "$skmcp_certs/tls.key" \
        --ssl-trustfile "$skmcp_certs/ca.crt" "$@"
}
