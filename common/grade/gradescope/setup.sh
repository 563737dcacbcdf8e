#!/usr/bin/env bash
# Gradescope's setup.sh for the kit's autograder, on a GPU runner.
#
# Make the autograder zip from the kit (an instructor's copy, with the
# references):  bash common/grade/gradescope/make-zip.sh autograder.zip
# The zip holds this file, run_autograder and kit/. The image must have an
# NVIDIA driver and GPU passed through, and the CUDA Toolkit (nvcc) on PATH
# (an image based on nvidia/cuda:*-devel, say). This installs what else the
# grader needs and builds the references once, into the image.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq make gawk bubblewrap unzip binutils >/dev/null
fi
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc >/dev/null 2>&1 || { echo "setup.sh: nvcc not found: the image needs the CUDA Toolkit" >&2; exit 1; }
# Built for every GPU the toolkit knows: the runner's GPU is not known here.
make -C /autograder/source/kit -j"$(nproc)" ARCH=-arch=all-major solutions build/bin/kit-query
