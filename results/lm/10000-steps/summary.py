#!/usr/bin/env python3
"""The tables of this folder's README: perplexity (chunks) at 10000 steps per seed block, beside the 3000-step
medians of ../experiment-lm/report.csv; and each encoding's growth ppl(fL) / ppl(L). Reads only committed files."""
import csv, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS = ["blocks/seed1/lm_report.csv", "blocks/seed2/lm_report.csv"]  # one block a seed
OLD = os.path.join(HERE, "..", "experiment-lm", "report.csv")
ENCS = ["sinusoidal", "learned", "rope", "t5", "alibi", "none"]
RATIOS = ["1", "1.5", "2", "4", "8"]


def load(path, col):
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["method"] != "chunks" or r["variant"] != "base":
                continue
            out[(r["task"], r["pos"], r["ratio"])] = float(r[col]) if r[col] not in ("", "nan") else None
    return out


def main():
    seeds = [load(os.path.join(HERE, b), "median_ppl") for b in BLOCKS if os.path.exists(os.path.join(HERE, b))]
    old = load(OLD, "median_ppl")
    for task in ["lm", "lm_en"]:
        print(f"\n{task}, chunks: 10000 steps, seeds {len(seeds)} (mean; per seed) | 3000 steps, median of 3")
        print("| encoding | " + " | ".join(f"{r}L" for r in RATIOS) + " | 2L / L at 10000 | 2L / L at 3000 |")
        print("|---|" + "---|" * (len(RATIOS) + 2))
        for e in ENCS:
            cells = []
            for r in RATIOS:
                vals = [s.get((task, e, r)) for s in seeds]
                o = old.get((task, e, r))
                if any(v is None for v in vals) or not vals:
                    cells.append("n/a" + (f" ({o:.2f})" if o else ""))
                    continue
                per = " / ".join(f"{v:.2f}" for v in vals)
                cells.append(f"{statistics.mean(vals):.2f} [{per}] ({o:.2f})" if o else f"{statistics.mean(vals):.2f} [{per}]")
            def growth(src):
                a, b = src(task, e, "1"), src(task, e, "2")
                return f"x{b / a:.2f}" if a and b else "n/a"
            g10 = growth(lambda t, p, r: statistics.mean([s[(t, p, r)] for s in seeds]) if all(s.get((t, p, r)) for s in seeds) else None)
            g3 = growth(lambda t, p, r: old.get((t, p, r)))
            print(f"| {e} | " + " | ".join(cells) + f" | {g10} | {g3} |")


if __name__ == "__main__":
    sys.exit(main())
