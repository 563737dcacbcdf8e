#!/usr/bin/env bash
# Installs Debian's slurm-wlm where this user may (root, or sudo without a
# password) so that the Slurm test of tests/91-class.bats can start a
# single-node cluster; CI runs it before `make test`. Never fails: where
# Slurm cannot be installed, that test skips and says why.
set -u
command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "setup-slurm: no apt-get; the Slurm test will skip" >&2; exit 0; }
sudo=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=sudo
    else
        echo "setup-slurm: not root; the Slurm test will skip (apt-get install slurm-wlm)" >&2
        exit 0
    fi
fi
echo "setup-slurm: apt-get install slurm-wlm" >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm >/dev/null 2>&1 ||
    { $sudo apt-get update -q >/dev/null 2>&1 &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm >/dev/null 2>&1; } ||
    echo "setup-slurm: slurm-wlm could not be installed; the Slurm test will skip" >&2
exit 0
