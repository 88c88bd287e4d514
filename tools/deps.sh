#!/bin/sh
# Installs the Debian packages ropegrad needs, only when they are missing (pkg-config cannot find the libraries,
# or gnuplot or OpenMPI's mpicc is not on PATH): as root directly, through sudo otherwise; if neither works it prints the exact
# command and fails, except when only gnuplot is missing (optional: train_order then skips the plot), which is a
# warning.
PKGS="libxsmm-dev libopenblas-dev libhdf5-dev libcmocka-dev libcjson-dev pkg-config gnuplot-nox libopenmpi-dev openmpi-bin fortunes-min"
# fortunes-min (BSD licence; ~100 KB of English text in /usr/share/games/fortunes) is the corpus of the lm_en task
# (src/task/lm.h, docs/lm.md).
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libxsmm openblas hdf5 cmocka libcjson && command -v gnuplot >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1 && [ -f /usr/share/games/fortunes/literature ]; then
    exit 0
fi
CMD="apt-get install -y $PKGS"
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo"
elif command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libxsmm openblas hdf5 cmocka libcjson && command -v mpicc >/dev/null 2>&1; then
    # only gnuplot is missing: it is optional (train_order then writes everything but the plot)
    echo "deps: gnuplot is missing (train_order will skip the plot); to install it as root: apt-get install -y gnuplot-nox" >&2
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
