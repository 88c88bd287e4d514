#!/bin/sh
# The runs of results/mrope-frames/README.md, one block per invocation, one after the other (--jobs 1, nice 5: the
# 2-core machine is shared). Usage, from the worktree's root:
#   sh results/mrope-frames/run.sh TRAIN_ORDER BLOCK...
# Each block writes results/mrope-frames/<block>/ (report.md has the command, commit, CPU and wall time).
set -u
BIN=$1; shift
COMMON="--seeds 3 --steps 3000 --train-len 3x4x4 --test-lens 3x4x4,4x4x4,6x4x4,3x5x5,3x6x6,3x8x8 --rope-scaling none --eval-every 250 --extrap-every 0 --jobs 1 --quiet"
IL="--pos-config mrope_interleaved=1"
for b in "$@"; do
    case $b in
    b1-hd16-frames)            args="--task frames --pos none,rope,rope-2d,mrope" ;;
    b2-hd16-qwen2vl)           args="--task frames_qwen2vl --pos rope-2d,mrope" ;;
    b3-hd32-frames)            args="--task frames --pos rope-2d,mrope --n-heads 2" ;;
    b4-hd32-qwen2vl)           args="--task frames_qwen2vl --pos rope-2d,mrope --n-heads 2" ;;
    b5-hd16-interleaved)       args="--task frames --pos mrope $IL" ;;
    b6-hd32-interleaved)       args="--task frames --pos mrope $IL --n-heads 2" ;;
    b7-qwen2vl-interleaved)    args="--task frames_qwen2vl --pos mrope $IL" ;;
    b8-hd32-qwen2vl-interl)    args="--task frames_qwen2vl --pos mrope $IL --n-heads 2" ;;
    b9-hd32-frames-1d)         args="--task frames --pos none,rope --n-heads 2" ;;
    *) echo "unknown block $b"; exit 2 ;;
    esac
    echo "$(date -u +%FT%TZ) start $b: $BIN $args $COMMON --out results/mrope-frames/$b"
    nice -n 5 "$BIN" $args $COMMON --out "results/mrope-frames/$b"
    echo "$(date -u +%FT%TZ) end $b: exit $?"
done
