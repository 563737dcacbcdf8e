#!/usr/bin/env bash
# Gradescope's setup.sh for the kit's autograder (make-zip.sh makes the zip:
# this file, run_autograder, kit-autograder.conf and kit/).
#
# Import mode (make-zip.sh --graded OUT): nothing to build; python3 reads
# the uploads and the GPU host's gradings. Gradescope's own images do.
#
# gpu mode: the image must have an NVIDIA driver with a GPU passed through,
# and the CUDA Toolkit (nvcc) on PATH (an image based on
# nvidia/cuda:*-devel, say). This installs what else the grader needs and
# builds the references once, into the image.
set -euo pipefail

mode=gpu
[ ! -f /autograder/source/kit-autograder.conf ] ||
    mode=$(sed -n 's/^mode=//p' /autograder/source/kit-autograder.conf)
export DEBIAN_FRONTEND=noninteractive
if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    if [ "$mode" = graded ]; then
        apt-get install -y -qq python3 >/dev/null
        exit 0
    fi
    apt-get install -y -qq make gawk bubblewrap unzip binutils python3 >/dev/null
fi
[ "$mode" != graded ] || exit 0
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc >/dev/null 2>&1 || { echo "setup.sh: nvcc not found: the image needs the CUDA Toolkit" >&2; exit 1; }
# Built for every GPU the toolkit knows: the runner's GPU is not known here.
make -C /autograder/source/kit -j"$(nproc)" ARCH=-arch=all-major solutions build/bin/kit-query
