#!/bin/sh
# The extra blocks of results/mrope-frames/README.md, run after run.sh's (same settings but where a block sets
# steps; --jobs 1, nice 5). Usage, from the worktree's root: sh results/mrope-frames/run2.sh TRAIN_ORDER BLOCK...
set -u
BIN=$1; shift
for b in "$@"; do
    steps=3000
    case $b in
    b10-hd16-theta10)          args="--task frames --pos mrope --rope-theta 10" ;;
    b12-hd16-interl-6000)      args="--task frames --pos mrope --pos-config mrope_interleaved=1"; steps=6000 ;;
    b13-hd32-interl-6000)      args="--task frames --pos mrope --pos-config mrope_interleaved=1 --n-heads 2"; steps=6000 ;;
    *) echo "unknown block $b"; exit 2 ;;
    esac
    COMMON="--seeds 3 --steps $steps --train-len 3x4x4 --test-lens 3x4x4,4x4x4,6x4x4,3x5x5,3x6x6,3x8x8 --rope-scaling none --eval-every 250 --extrap-every 0 --jobs 1 --quiet"
    echo "$(date -u +%FT%TZ) start $b: $BIN $args $COMMON --out results/mrope-frames/$b"
    nice -n 5 "$BIN" $args $COMMON --out "results/mrope-frames/$b"
    echo "$(date -u +%FT%TZ) end $b: exit $?"
done
