# Pull Skupper's images with podman before skupper does (facts/images.py reads the output):
# Skupper's own pull (through podman's API) says nothing until it ends, podman pull says what
# it copies. The pull runs in the background, its lines in a file, so each read of it (poll)
# is one short command and a pull outlives no deadline of ours: stop kills it.
# $1 start|poll|stop; $2 the work directory under $HOME; then, for start, each image as
# COMPONENT=NAME (NAME after the registry), which the host's own SKUPPER_IMAGE_REGISTRY,
# SKUPPER_ROUTER_IMAGE and SKUPPER_SYSTEM_CONTROLLER_IMAGE override as skupper's do.
mode=$1 dir="$HOME/$2"
shift 2
case $mode in
start)
    rm -rf "$dir"
    # a home setup cannot write in: Skupper pulls the images itself, silently
    if ! mkdir -p "$dir" 2>/dev/null || ! : > "$dir/images" 2>/dev/null; then
        echo "@@unwritable"
        echo "@@end"
        exit 0
    fi
    registry="${SKUPPER_IMAGE_REGISTRY:-quay.io/skupper}"
    n=0
    for item in "$@"; do
        component=${item%%=*} image="$registry/${item#*=}"
        case $component in
            router) image="${SKUPPER_ROUTER_IMAGE:-$image}" ;;
            system-controller) image="${SKUPPER_SYSTEM_CONTROLLER_IMAGE:-$image}" ;;
        esac
        # a name is the host's text: one line of plain characters
        image=$(printf %s "$image" | tr -c 'A-Za-z0-9._/:@-' '?')
        if podman image exists "$image" 2>/dev/null; then
            echo "@@present $component"
            echo "|$image"
            continue
        fi
        n=$((n + 1))
        printf '%s %s %s\n' "$n" "$component" "$image" >> "$dir/images"
    done
    [ "$n" -gt 0 ] || { echo "@@end"; exit 0; }
    # one after the other, each its log and its exit status; detached from this command
    (
        while read -r i component image; do
            podman pull "$image" > "$dir/$i.log" 2>&1 < /dev/null
            echo $? > "$dir/$i.rc"
            [ "$(cat "$dir/$i.rc")" = 0 ] || break
        done < "$dir/images"
    ) > /dev/null 2>&1 < /dev/null &
    echo $! > "$dir/pid"
    ;;
stop)
    if [ -f "$dir/pid" ]; then
        p=$(cat "$dir/pid")
        # the pull first (the loop's child), then the loop, so none starts the next
        pkill -P "$p" 2>/dev/null
        kill "$p" 2>/dev/null
    fi
    rm -rf "$dir"
    echo "@@end"
    exit 0
    ;;
esac
# start and poll: each image to pull, the last of its log, its exit status once it ended
while read -r i component image; do
    echo "@@pull $i $component"
    echo "|$image"
    if [ -f "$dir/$i.log" ]; then
        echo "@@log $i"
        tail -c 4096 "$dir/$i.log" | sed 's/^/|/'
    fi
    [ -f "$dir/$i.rc" ] && echo "@@done $i $(cat "$dir/$i.rc")"
done < "$dir/images"
echo "@@end"
