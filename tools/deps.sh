#!/bin/sh
# Installs the Debian packages ropegrad needs, only when they are missing (pkg-config cannot find the libraries,
# or gnuplot or OpenMPI's mpicc is not on PATH, or oneDNN's dnnl.h is absent): as root directly, through sudo otherwise; if
# neither works it prints the exact command and fails, except when only gnuplot or oneDNN is missing (optional:
# train_order then skips the plot; without oneDNN the library is fp32 only and refuses --precision bf16), which is a
# warning.
# fortunes-min (BSD licence; ~100 KB of English text in /usr/share/games/fortunes) is the corpus of the lm_en task
# (src/task/lm.h, docs/lm.md).
PKGS="libxsmm-dev libopenblas-dev libhdf5-dev libcmocka-dev libcjson-dev pkg-config gnuplot-nox libopenmpi-dev openmpi-bin libdnnl-dev fortunes-min"
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libxsmm openblas hdf5 cmocka libcjson && command -v gnuplot >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1 && [ -f /usr/include/dnnl.h ] && [ -f /usr/share/games/fortunes/literature ]; then
    exit 0
fi
CMD="apt-get install -y $PKGS"
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo"
elif command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libxsmm openblas hdf5 cmocka libcjson && command -v mpicc >/dev/null 2>&1; then
    # only gnuplot or oneDNN is missing: both are optional (train_order then writes everything but the plot; without
    # oneDNN the build is fp32 only)
    echo "deps: gnuplot or oneDNN is missing (no plot / fp32 only); to install them as root: apt-get install -y gnuplot-nox libdnnl-dev" >&2
    exit 0
else
    echo "deps: missing packages and no root or sudo; run as root: apt-get update && $CMD" >&2
    exit 1
fi
echo "deps: installing $PKGS"
export DEBIAN_FRONTEND=noninteractive
# a fresh machine may have an empty package list: update and retry once
$SUDO apt-get install -y $PKGS || { $SUDO apt-get update && $SUDO apt-get install -y $PKGS; } || {
    echo "deps: failed: $SUDO apt-get update && $SUDO $CMD" >&2
    exit 1
}
pkg-config --exists libxsmm openblas hdf5 cmocka libcjson || { echo "deps: pkg-config still cannot find libxsmm openblas hdf5 cmocka libcjson" >&2; exit 1; }
