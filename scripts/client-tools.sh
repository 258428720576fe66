#!/bin/sh
# The real client tools the exports are for, at the versions the tests were written against,
# in a directory of their own (default .tools/, which git ignores): the LiteLLM proxy in a
# venv, opencode and Continue's cn from the npm registry. Too heavy for test dependencies
# (about 1.2 GB); tests/sandbox/test_exports_in_tools.py runs them where they are and skips,
# saying how to install them, where they are not. .ci/run installs them; by hand:
#
#   sh scripts/client-tools.sh && . .tools/env
#
# Each part is installed once: a finished part leaves a stamp and is not installed again.
set -eu
dir=${1:-.tools}
python=${PYTHON:-python3}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case $dir in *\'*) echo "client-tools: $dir: a directory whose path holds no quote, please" >&2; exit 2 ;; esac

if [ ! -f "$dir/litellm/.installed" ]; then
    rm -rf "$dir/litellm"
    "$python" -m venv "$dir/litellm"
    "$dir/litellm/bin/pip" install -q 'litellm[proxy]==1.108.7'
    touch "$dir/litellm/.installed"
fi

if [ ! -f "$dir/npm/.installed" ]; then
    rm -rf "$dir/npm"
    mkdir -p "$dir/npm"
    (cd "$dir/npm" && npm install --no-audit --no-fund --silent \
        opencode-ai@1.18.33 @continuedev/cli@1.5.47)
    touch "$dir/npm/.installed"
fi

cat >"$dir/env" <<ENV
export SKMCP_LITELLM='$dir/litellm/bin/litellm'
export SKMCP_OPENCODE='$dir/npm/node_modules/.bin/opencode'
export SKMCP_CN='$dir/npm/node_modules/.bin/cn'
ENV
echo "client tools in $dir: . $dir/env sets SKMCP_LITELLM, SKMCP_OPENCODE and SKMCP_CN"
