# Disable Skupper's units, write ours over them, reload systemd and enable ours (so the site
# comes back when the host boots; down disables them); the controller unit an earlier skupper-mcp
# wrote under "<user>-skupper-controller.service" goes (sites/podman.py install_units).
# $1: the login's user name (empty: asked of the host); $2: what it is followed by in the
# legacy controller unit; $3: the watch script, from $HOME; $4: its text in base64; then a
# unit's name and its text in base64 for each unit. Base64 keeps quoting out of the texts.
user=${1:-$(id -un)}
legacy="$user$2" watch="$HOME/$3" watch_text=$4
shift 4
u="$SKMCP_UNITS"
mkdir -p "$u" "${watch%/*}"
unit_names() {
    while [ $# -gt 1 ]; do
        printf '%s\n' "$1"
        shift 2
    done
}
# unit names are plain words (names.py): split on the newlines between them
wanted=$(unit_names "$@")
# shellcheck disable=SC2086
$SKMCP_CTL disable $wanted >/dev/null 2>&1 || true
$SKMCP_CTL disable --now "$legacy" >/dev/null 2>&1 || true
rm -f "$u/$legacy"
while [ $# -gt 1 ]; do
    printf %s "$2" | base64 -d > "$u/$1"
    shift 2
done
printf %s "$watch_text" | base64 -d > "$watch"
$SKMCP_CTL daemon-reload
# shellcheck disable=SC2086
$SKMCP_CTL enable $wanted >/dev/null 2>&1
