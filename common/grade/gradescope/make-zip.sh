#!/usr/bin/env bash
# make-zip.sh [options] ZIP: the Gradescope autograder zip of this kit:
# setup.sh, run_autograder and kit-autograder.conf at its top, the kit
# (Makefile, common/, solutions/) in kit/.
#
#   --graded OUT        import mode: the zip holds the gradings of the class
#                       graded on the course's GPU host (make grade-class
#                       ... OUT=OUT), keyed by the SHA-256 of the lab files
#                       graded; run_autograder hands each upload the grading
#                       of exactly its files. No GPU or compiler needed.
#   --labs "01 02"      the labs of the assignment (gpu mode; default: the
#                       labs each upload holds)
#   --allow-unsandboxed gpu mode: grade where bubblewrap cannot start, with
#                       the container as the only isolation (refused
#                       otherwise: an autograder failure says why)
#
# Dependencies: python3 (its zipfile writes the zip).
set -euo pipefail
usage() { sed -n '2,18s/^# \{0,1\}//p' "$0"; }
graded="" labs="" allow=no
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --graded) [[ $# -ge 2 && -d $2 ]] || { echo "make-zip.sh: --graded needs grade-class's OUT folder" >&2; exit 64; }
        graded=$(cd "$2" && pwd); shift 2 ;;
    --labs) [ $# -ge 2 ] || { echo "make-zip.sh: --labs needs a list" >&2; exit 64; }; labs=$2; shift 2 ;;
    --allow-unsandboxed) allow=yes; shift ;;
    -*) echo "make-zip.sh: unknown option '$1'" >&2; exit 64 ;;
    *) break ;;
    esac
done
[ $# = 1 ] || { echo "usage: make-zip.sh [--graded OUT] [--labs LIST] [--allow-unsandboxed] ZIP" >&2; exit 64; }
command -v python3 >/dev/null 2>&1 || { echo "make-zip.sh: python3 is not installed" >&2; exit 3; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
zip=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/kit/labs"
cp -p "$here/setup.sh" "$here/run_autograder" "$tmp/"
# With their times: a source newer than a build made from it would be built
# again (the zip keeps them, and unzip sets them back).
cp -Rp "$top/Makefile" "$top/common" "$top/solutions" "$tmp/kit/"
{
    echo "# Written by make-zip.sh; read by setup.sh and run_autograder."
    echo "mode=$([ -n "$graded" ] && echo graded || echo gpu)"
    echo "labs=$labs"
    echo "allow_unsandboxed=$allow"
} >"$tmp/kit-autograder.conf"
n=0
if [ -n "$graded" ]; then
    # The graded kit keeps no references: nothing is built or run there.
    rm -rf "$tmp/kit/solutions"
    mkdir -p "$tmp/graded"
    for d in "$graded"/students/*/; do
        d=${d%/}
        # Only gradings of every lab (a grading that skipped one is no
        # grade) of files whose digest grade-class kept.
        [[ -f $d/done && -f $d/results.json && -f $d/lab-files.sha256 ]] || continue
        digest=$(sed -n 's/^sha256://p' "$d/lab-files.sha256")
        [[ $digest =~ ^[0-9a-f]{64}$ ]] || continue
        cp "$d/results.json" "$tmp/graded/$digest.json"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || { echo "make-zip.sh: no student graded in full in $graded/students" >&2; exit 3; }
fi
rm -f "$zip"
# As `zip -r` would write it: every file under its path, with its mode.
python3 - "$tmp" "$zip" <<'EOF' || { echo "make-zip.sh: could not write $zip" >&2; exit 3; }
import os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
try:  # a file dated before 1980 gets 1980 (Python 3.8 and newer)
    z = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, strict_timestamps=False)
except TypeError:
    z = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED)
with z:
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        if folder != root:
            z.write(folder, os.path.relpath(folder, root))
        for name in sorted(files):
            path = os.path.join(folder, name)
            z.write(path, os.path.relpath(path, root))
EOF
if [ -n "$graded" ]; then
    echo "$zip: the gradings of $n submissions; upload it as the assignment's autograder, then Regrade All Submissions"
else
    echo "$zip: upload it as the assignment's autograder (an image with a GPU: see setup.sh)"
fi
