#!/bin/sh
# tools/fuzz.sh BUILD [N] [SEED]: the re-sealed mutation campaign of issue 25 (`make fuzz`; docs/checkpoint.md,
# "Parsing out of process"). Trains a small train_order run to get a reference checkpoint (the tiny model: the same
# groups, datasets and attributes as the default one, 137 kB instead of 1.4 MB), then runs build/tools/fuzz_ckpt on
# it: N mutations (default 2000), each re-sealed, loaded by the library, by train_order --eval and (every tenth) by
# train_order --resume. Prints the commit, the summary tables and the wall time; exits 1 on any crash, hang or
# silent load. Not part of `make test`.
set -u
B=${1:-build}
N=${2:-2000}
SEED=${3:-1}
dir=$(mktemp -d /tmp/rg_fuzz_XXXXXX) || exit 2
trap 'rm -rf "$dir"' EXIT
"$B/examples/train_order" --task copy --pos rope --steps 20 --ckpt-every 20 --eval-every 0 --test-lens 8 \
    --rope-scaling none --d-model 16 --n-heads 2 --d-ff 32 --max-len 40 --jobs 1 --quiet --out "$dir/ref" || exit 2
ref="$dir/ref/ckpt/copy-rope-seed1.h5"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +dirty)"
start=$(date +%s)
"$B/tools/fuzz_ckpt" "$ref" "$N" "$SEED" "$B/examples/train_order" "$dir"
status=$?
echo "wall time $(($(date +%s) - start)) s (N=$N, seed $SEED)"
exit $status
