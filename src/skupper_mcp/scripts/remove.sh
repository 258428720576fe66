# Remove a site: its units, containers and namespace; the system controller too when no
# other namespace holds a site (sites/podman.py remove says why each piece goes here).
# $1: the Skupper namespace; $2: its router unit; $3: the controller unit; $4: the router
# container; $5: the login's user name (empty: asked of the host); $6 and $7: what it is
# followed by in the legacy controller unit and in the controller container; $8: the watch
# script, from $HOME.
ns=$1 router_unit=$2 controller_unit=$3 router=$4 user=${5:-$(id -un)}
legacy="$user$6" controller="$user$7" watch_script=$8
u="$SKMCP_UNITS"
data="$SKMCP_DATA"
nsdir="$data/namespaces/$ns"
$SKMCP_CTL stop "$router_unit" >/dev/null 2>&1 || true
skupper system stop -n "$ns" >/dev/null 2>&1 || true
podman rm -f "$router" >/dev/null 2>&1 || true
$SKMCP_CTL disable "$router_unit" >/dev/null 2>&1 || true
rm -f "$u/$router_unit"
rm -rf "$nsdir" || rm -rf "$nsdir"
others=''
for d in "$data"/namespaces/*/; do
    [ -d "${d}runtime" ] || continue
    d="${d%/}"
    [ "${d##*/}" = "$ns" ] && continue
    others="$others ${d##*/}"
done
if [ -n "$others" ]; then
    # namespace names (DNS labels), split on the spaces put between them above
    for o in $others; do
        echo "@@kept $o"
    done
else
    $SKMCP_CTL stop "$controller_unit" "$legacy" >/dev/null 2>&1 || true
    skupper system uninstall >/dev/null 2>&1 || true
    $SKMCP_CTL disable "$controller_unit" "$legacy" >/dev/null 2>&1 || true
    rm -f "$u/$controller_unit" "$u/$legacy"
    podman rm -f "$controller" >/dev/null 2>&1 || true
    rm -f "${HOME:?}/$watch_script"
fi
rm -rf "$nsdir"
$SKMCP_CTL daemon-reload
