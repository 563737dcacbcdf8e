#!/usr/bin/env bash
# unpack.sh SUBMISSION DEST LAB...: takes the lab files of one submission
# (a folder, or a .tar, .tar.gz, .tgz, .tar.xz or .zip archive of one) into
# DEST/LAB/name.cu. grade-class.sh runs it inside the sandbox, where
# SUBMISSION is read-only and DEST the only place it may write.
#
# An archive is unpacked into the sandbox's private /tmp first. Only regular
# files are taken, at the path of a lab file (LAB/name.cu, anywhere at most
# five folders down, the shortest path if there are several): never a
# symbolic link or anything under one, a device or a fifo. Prints the reason
# and exits 1 when nothing can be taken.
set -uo pipefail

src=$1 dest=$2
shift 2
[ -d "$dest" ] || { echo "no folder $dest"; exit 1; }

root=$src
case $src in
*.zip | *.tar | *.tar.gz | *.tgz | *.tar.xz)
    if [ ! -f "$src" ] || [ -L "$src" ]; then
        echo "the archive is not a regular file"
        exit 1
    fi
    root=$(mktemp -d "${TMPDIR:-/tmp}/unpack.XXXXXX") || exit 1
    case $src in
    *.zip)
        command -v unzip >/dev/null 2>&1 || { echo "cannot unpack a .zip: unzip is not installed"; exit 1; }
        bad=$(unzip -Z1 "$src" 2>/dev/null | grep -m1 -E '^/|(^|/)\.\.(/|$)')
        if [ -n "$bad" ]; then
            echo "the archive holds a path outside itself ($(printf '%q' "$bad")): not unpacked"
            exit 1
        fi
        unzip -qq -o "$src" -d "$root" >/dev/null 2>&1 || { echo "a damaged .zip archive"; exit 1; } ;;
    *)
        bad=$(tar -tf "$src" 2>/dev/null | grep -m1 -E '^/|(^|/)\.\.(/|$)')
        if [ -n "$bad" ]; then
            echo "the archive holds a path outside itself ($(printf '%q' "$bad")): not unpacked"
            exit 1
        fi
        # GNU tar refuses members with .., drops a leading /, and sets
        # symbolic links last, so that nothing lands outside $root.
        tar -xf "$src" -C "$root" --no-same-owner --no-same-permissions >/dev/null 2>&1 ||
            { echo "a damaged archive"; exit 1; } ;;
    esac ;;
*)
    if [ ! -d "$src" ] || [ -L "$src" ]; then
        echo "neither a folder nor an archive (.tar, .tar.gz, .tgz, .tar.xz, .zip)"
        exit 1
    fi
    ;;
esac

found=0
for lab in "$@"; do
    name=${lab#*-}
    # find -P never follows a symbolic link, so no path it prints has one.
    file=$(find -P "$root" -maxdepth 6 -type f -path "*/$lab/$name.cu" -printf '%d %P\n' 2>/dev/null |
        sort -n | head -n 1 | cut -d' ' -f2-)
    [ -n "$file" ] || continue
    { [ -f "$root/$file" ] && [ ! -L "$root/$file" ]; } || continue
    mkdir -p "$dest/$lab" && cp --no-dereference -- "$root/$file" "$dest/$lab/$name.cu" && found=$((found + 1))
done
if [ "$found" = 0 ]; then
    link=$(find -P "$root" -maxdepth 6 -type l -printf '%P\n' 2>/dev/null | sort | head -n 1)
    echo "no lab files (labs/NN-name/name.cu, or NN-name/name.cu) in the submission${link:+: a symbolic link is never taken ($(printf '%q' "$link"))}"
    exit 1
fi
exit 0
