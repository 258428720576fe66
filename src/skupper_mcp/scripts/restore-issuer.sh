# Give a new namespace the CA of a backup (input/issuers overrides the generated CA). The
# files come on stdin, one "NAME BASE64" line each: the CA's key never is on a command line
# another user could read. $1: the Skupper namespace.
d="$SKMCP_DATA/namespaces/$1/input/issuers/skupper-site-ca"
mkdir -p "$d"
chmod 700 "$d"
umask 077
while read -r name data; do
    printf %s "$data" | base64 -d > "$d/$name"
done
