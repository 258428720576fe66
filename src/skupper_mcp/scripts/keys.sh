# The private-key files of a Skupper namespace (facts/private_keys.py says which and why).
# Defined before every script the product sends (connectors/shell.py prelude()).


# skmcp_open_keys NSDIR MAX: one "MODE PATH" line for each key file under NSDIR that group
# or others may read, write or run (at most MAX). Each name is cut at a NUL and its
# newlines printed as "?", so one file is always one line; a caller still stuffs each line.
skmcp_open_keys() {
    ( cd "$1" 2>/dev/null || exit 0
      set --
      for d in input runtime; do if [ -d "$d" ]; then set -- "$@" "$d"; fi; done
      [ $# -gt 0 ] || exit 0
      find "$@" -type f \( -name tls.key -o -path '*/resources/Secret-*' -o -path 'runtime/links/*' \) \
          -perm /077 -printf '%m %p\0' 2>/dev/null ) | tr '\n\0' '?\n' | head -n "$2"
}

# skmcp_close_keys NSDIR: take group's and others' access from every key file under NSDIR.
skmcp_close_keys() {
    ( cd "$1" || exit 1
      set --
      for d in input runtime; do if [ -d "$d" ]; then set -- "$@" "$d"; fi; done
      [ $# -gt 0 ] || exit 0
      find "$@" -type f \( -name tls.key -o -path '*/resources/Secret-*' -o -path 'runtime/links/*' \) \
          -exec chmod go-rwx {} + )
}
