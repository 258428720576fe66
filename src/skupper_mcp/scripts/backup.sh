# A tar.gz of a namespace's inputs and CAs (what teardown keeps), with the list of its files
# (sites/podman.py backup_archive). The archive is written to a file first: a tar that fails
# ends the script (set -e) instead of handing a pipe's partial output on as a backup.
# $1: the Skupper namespace.
d="$SKMCP_DATA/namespaces/$1"
[ -d "$d" ] || exit 0
cd "$d" || exit
set --
for p in input runtime/issuers; do
    [ -e "$p" ] && set -- "$@" "$p"
done
[ $# -gt 0 ] || exit 0
# the names NUL-terminated and in base64: a name may hold a newline
echo @@files
printf "|"
find "$@" -type f -print0 | base64 -w0
echo
t=$(mktemp)
trap 'rm -f "$t"' EXIT
tar -czf "$t" "$@"
echo @@archive
printf "|"
base64 -w0 < "$t"
echo
