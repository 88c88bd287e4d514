#!/bin/sh
# report_identity.sh: runs a fixed small grid of train_order jobs (three ordering tasks and copy_hints; none, t5
# with its max_distance variant, alibi, learned, rope and rope-half with --rope-scaling and theta500k, fire,
# kerple-log, sinusoidal, xl, +rand, bf16 angles; a grid task with the 2-D encodings; the language model) into OUT,
# a few steps each, so that two builds' report files can be compared byte for byte, time columns aside.
#   tools/report_identity.sh run BIN OUT       run the grid with train_order BIN into OUT/g1..g4
#   tools/report_identity.sh compare A B       compare two such folders' text files (dates, wall and run times,
#                                              the commit, and the output folder's name masked); exit 1 on any
#                                              difference
# The plots' images (.png, .pdf, .svg) and checkpoints are not compared: their .gp and .dat are.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
case "$1" in
run)
    B=$2; O=$3; D=${ROPEGRAD_DATA:-$here/data/eval_sets.h5}
    C="--seeds 1 --steps 30 --batch 8 --d-model 16 --n-heads 2 --n-layers 1 --d-ff 32 --eval-every 10 --extrap-every 10 --ckpt-every 30 --jobs 2 --threads 1 --quiet --data $D"
    $B --task copy,reverse,copy_hints --pos none,t5,alibi,learned,rope,rope-half,fire,kerple-log --variants base,theta500k,t5max128 --rope-scaling yarn,pi --train-len 6 --test-lens 3,6,7,9,12 $C --out $O/g1
    $B --task sort --pos t5,alibi,rope,sinusoidal,xl --variants base,rand,bf16angles --rope-scaling all --train-len 5 --test-lens 5,8 $C --out $O/g2
    $B --task grid_copy --train-len 3x3 --pos rope-2d,mrope,alibi-2d-manhattan,t5-2d,rope $C --out $O/g3
    $B --task lm --pos rope,alibi,t5,learned --rope-scaling yarn --train-len 8 --test-lens 8,16 $C --out $O/g4
    ;;
compare)
    python3 - "$2" "$3" <<'PY'
import os, re, sys
a, b = sys.argv[1], sys.argv[2]
TIME_COLS = {"train_seconds", "tokens_per_s", "elapsed_s", "eval_seconds", "seconds"}
def norm(path, root):
    text = open(path, encoding="utf-8", errors="replace").read().replace(root, "OUT")
    text = re.sub(r"(date\W+)\d{4}-\d\d-\d\dT[\d:]+Z", r"\1DATE", text)
    text = re.sub(r"(commit: |\"commit\":\s*\")[0-9a-f]+(\+dirty)?", r"\1COMMIT", text)
    text = re.sub(r"(wall time: )[\d.]+ s \([\d.]+ min\)", r"\1WALL", text)
    text = re.sub(r'("(wall|train|eval)_seconds":\s*)[-\d.e+]+', r"\1TIME", text)
    text = re.sub(r"`[^`]*train_order[^ `]*", "`train_order", text)
    text = re.sub(r'("command":\s*")[^ "]*train_order[^ "]*', r"\1train_order", text)
    if path.endswith(".csv"):
        lines = text.split("\n")
        cols = [i for i, h in enumerate(lines[0].split(",")) if h in TIME_COLS]
        out = [lines[0]]
        for l in lines[1:]:
            f = l.split(",")
            for i in cols:
                if i < len(f): f[i] = "TIME"
            out.append(",".join(f))
        text = "\n".join(out)
    return text
bad = 0
for top in (a, b):
    other = b if top == a else a
    for d, _, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            rel = os.path.relpath(p, top)
            if "/ckpt/" in "/" + rel or f.endswith((".png", ".pdf", ".svg")): continue
            q = os.path.join(other, rel)
            if not os.path.exists(q):
                print("only in", top, rel); bad = 1; continue
            if top == b: continue
            if norm(p, a) != norm(q, b):
                print("differs:", rel); bad = 1
sys.exit(bad)
PY
    ;;
*) echo "usage: $0 run BIN OUT | compare A B" >&2; exit 2 ;;
esac
