#!/usr/bin/env bash
# Installs the optional tools some tests use, where this machine may
# (root, or sudo without a password, and apt-get): shellcheck, gnuplot,
# bubblewrap, PyYAML (the Classroom workflows' replay). Never fails: a test
# whose tool is missing skips and says so.
set -u
need=()
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v gnuplot >/dev/null 2>&1 || need+=(gnuplot-nox)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
python3 -c 'import yaml' >/dev/null 2>&1 || need+=(python3-yaml)
[ ${#need[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || exit 0
sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || exit 0
    sudo=sudo
fi
echo "setting up optional test tools: ${need[*]}" >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { $sudo apt-get update -q >/dev/null 2>&1 &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1; }
exit 0
