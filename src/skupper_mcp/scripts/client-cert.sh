# A site's link client certificate files (base64), for building links (sites/podman.py).
# $1: the Skupper namespace; $2: the certificate directory under runtime/certs.
dir="$SKMCP_DATA/namespaces/$1/runtime/certs/$2"
for k in ca.crt tls.crt tls.key; do
    echo "@@file cert $k"
    printf "|"
    base64 -w0 < "$dir/$k" || exit 1
    echo
done
echo "@@end"
