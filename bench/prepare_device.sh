#!/usr/bin/env bash
# Build .device/ (what a GPU machine lacks; /work/shared/device/README.md) from this checkout, worktree or not.
# prepare.sh appends '/.device/' to .git/info/exclude, but in a `git worktree` .git is a file ("gitdir: ..."), so
# that write fails ("line 11: .git/info/exclude: Not a directory") and `set -e` stops it. It reads only
# requirements.txt and .venv from its working folder, so here it runs in a staging folder that has those and a real
# .git/info/, and .device/ is moved back; .gitignore ignores /.device/ itself, so nothing needs the exclude file.
# Usage, from the project root, after `make setup`:  bash bench/prepare_device.sh [path/to/prepare.sh]
set -euo pipefail
PREPARE=${1:-/work/shared/device/prepare.sh}
ROOT=$PWD
if [ -d .git ]; then exec bash "$PREPARE"; fi
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/.git/info"
ln -s "$ROOT/requirements.txt" "$STAGE/requirements.txt"
ln -s "$(readlink -f "$ROOT/.venv")" "$STAGE/.venv"
(cd "$STAGE" && bash "$PREPARE")
rm -rf "$ROOT/.device"
mv "$STAGE/.device" "$ROOT/.device"
echo ".device/ is in $ROOT"
