#!/bin/sh
# bench/run.sh: the training-step benchmark (bench/README.md); `make bench` runs it. A benchmark, never a test.
#
#   sh bench/run.sh [BENCH_BINARY] [--quick] [--once] [--coretype NAME] [--models ref,large] [--pos rope,t5]
#                   [--threads 1,2] [--precision fp32,bf16]
#
# For each environment it runs bench/bench_torch.py (PyTorch, /usr/bin/python3) and then the C benchmark with the
# SAME environment, the C side printing the table with PyTorch's numbers next to its own. Two environments by
# default: the one given (whatever OPENBLAS_CORETYPE the machine sets, or none: OpenBLAS 0.3.21 then detects its
# kernels, and falls back to generic SSE3 ones on CPUs newer than it) and the same with OPENBLAS_CORETYPE set to the
# CPU's own kernel set (`bench --own-coretype`: SkylakeX with AVX-512, Haswell with AVX2), where PyTorch's fp32
# products are at their best and the targets' speedups are judged. --coretype NAME picks another set; --once runs
# the given environment only. The long memory run (RSS after 100 vs 1000 steps) is done in the last pass only.
# Progress goes to stderr; the tables are printed together at the end and saved next to the binary (results.md,
# with PyTorch's TSVs torch-1.tsv, torch-2.tsv). BENCH_PYTHON overrides /usr/bin/python3.
#
# OMP_WAIT_POLICY: unless it is set already, both passes run with OMP_WAIT_POLICY=PASSIVE. Only PyTorch uses
# OpenMP (libgomp); with libgomp's default spin-waiting its 2-thread steps were ~20x slower than its 1-thread ones
# whenever other processes shared the 2 cores (1596 ms vs 67 ms on the reference model; 87 ms with PASSIVE), which
# measures the contention, not PyTorch. Set OMP_WAIT_POLICY=ACTIVE yourself to measure libgomp's default.
set -u
BIN=build/bench/bench
case "${1:-}" in
    -*|"") ;;
    *) BIN=$1; shift ;;
esac
QUICK=""
SEL=""
ONCE=0
CORE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=--quick ;;
        --once) ONCE=1 ;;
        --coretype) [ $# -ge 2 ] || { echo "run.sh: --coretype needs a name" >&2; exit 2; }; CORE=$2; shift ;;
        --models|--pos|--threads|--precision)   # passed to both sides
            [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }; SEL="$SEL $1 $2"; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$BIN" ] || { echo "run.sh: $BIN not built (make bench builds it)" >&2; exit 1; }
[ -n "$CORE" ] || CORE=$("$BIN" --own-coretype)
if [ -z "$CORE" ]; then
    echo "run.sh: no OpenBLAS kernel set known for this CPU: one pass" >&2
    ONCE=1
fi
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${BENCH_PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
OUTDIR=$(dirname "$BIN")
OUT=$OUTDIR/results.md

# A second pass only when it changes something.
if [ "$ONCE" = 0 ] && [ "${OPENBLAS_CORETYPE:-}" = "$CORE" ]; then
    echo "run.sh: OPENBLAS_CORETYPE is already $CORE: one pass" >&2
    ONCE=1
fi

# run_pass N LABEL RSS_FLAG [VAR=VALUE ...]: both sides under `env VAR=VALUE ...`; the table goes to $TMP/table-N.
run_pass() {
    n=$1 label=$2 rss=$3
    shift 3
    tsv=$OUTDIR/torch-$n.tsv
    rm -f "$tsv"
    skipped=""
    if [ -x "$PY" ]; then
        echo "run.sh: pass $n ($label): PyTorch..." >&2
        env "$@" "$PY" "$HERE/bench_torch.py" $QUICK $SEL --out "$tsv" >&2
        rc=$?
        if [ $rc -ne 0 ]; then
            skipped="bench_torch.py failed with exit status $rc"
        elif [ ! -s "$tsv" ]; then
            skipped="python3-torch not installed"
        fi
    else
        skipped="$PY not found"
    fi
    echo "run.sh: pass $n ($label): C..." >&2
    if [ -n "$skipped" ]; then
        env "$@" "$BIN" $QUICK $SEL $rss --label "$label" --torch-skipped "$skipped" > "$TMP/table-$n"
    else
        env "$@" "$BIN" $QUICK $SEL $rss --label "$label" --torch "$tsv" > "$TMP/table-$n"
    fi || echo "run.sh: the C benchmark failed (exit status $?)" >> "$TMP/table-$n"
}

if [ -z "${OMP_WAIT_POLICY:-}" ]; then
    OMP_WAIT_POLICY=PASSIVE
    export OMP_WAIT_POLICY
    echo "run.sh: OMP_WAIT_POLICY=PASSIVE for both sides (see the comment at the top of bench/run.sh)" >&2
fi

START=$(date +%s)
GIVEN="environment as given (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
if [ "$ONCE" = 1 ]; then
    run_pass 1 "$GIVEN" ""
else
    run_pass 1 "$GIVEN" --no-rss
    run_pass 2 "OPENBLAS_CORETYPE=$CORE, the CPU's own kernels (set by bench/run.sh for both sides)" "" \
        OPENBLAS_CORETYPE="$CORE"
fi
END=$(date +%s)

{
    echo "# ropegrad benchmark ($(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) CPUs, commit $(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$HERE/.." diff --quiet HEAD -- src 2>/dev/null || echo ' + uncommitted changes in src/'), ${QUICK:-full run}, $((END - START)) s)"
    for f in "$TMP"/table-*; do cat "$f"; done
} > "$TMP/all"
cat "$TMP/all"
cp "$TMP/all" "$OUT" 2>/dev/null && echo "(saved to $OUT)" >&2
exit 0
