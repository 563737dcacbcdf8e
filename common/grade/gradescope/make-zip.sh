#!/usr/bin/env bash
# make-zip.sh ZIP: the Gradescope autograder zip of this kit: setup.sh and
# run_autograder at its top, the kit (Makefile, common/, solutions/) in kit/.
set -euo pipefail
[ $# = 1 ] || { echo "usage: make-zip.sh ZIP" >&2; exit 64; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
zip=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/kit/labs"
cp "$here/setup.sh" "$here/run_autograder" "$tmp/"
cp -R "$top/Makefile" "$top/common" "$top/solutions" "$tmp/kit/"
rm -f "$zip"
(cd "$tmp" && zip -qr "$zip" .)
echo "$zip: upload it as the assignment's autograder (a GPU runner: see setup.sh)"
