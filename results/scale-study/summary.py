#!/usr/bin/env python3
"""The tables and the figure data of this folder's README, from committed report.csv files only.

size:   copy, exact match at L, 1.25x, 1.5x and 2x per encoding and model size (64 x 2 from the 330-run grid,
        seeds 1-3 and all ten; larger sizes from blocks/size-*; a longer budget from blocks/budget-*), mean, 95% t-interval over seeds (clamped to
        [0, 1]), k/N seeds reaching 0.5 and each seed's value.
length: copy trained at L = 8, 16, 32: exact match at L, 1.25L, 1.5L, 2L and the extrapolation factor, the
        largest tested n / L whose exact match is >= 0.5 in at least half the seeds; writes
        figures/extrapolation_factor.dat for figures/extrapolation_factor.gp.
learn:  steps to learn copy at L and the final training loss per run, by encoding and size.
Usage: python3 results/scale-study/summary.py [size|learn|length]   (all when no argument)"""
import csv, glob, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = os.path.join(HERE, "..", "experiment-10seeds", "report.csv")
ENCS = ["none", "t5", "alibi", "rope", "kerple-log"]
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def rows(path):
    """Base rows (no RoPE scaling, no variant) of one report.csv, with the size 64x2 where the file has none."""
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["variant"] == "base" and r["rope_ext"] == "none" and r["task"] == "copy":
                r.setdefault("size", "64x2")
                yield r


def table(paths, seeds=None):
    """{(size, train_len, encoding, n): {seed: exact_match}} over the given report files."""
    out = {}
    for p in paths:
        for r in rows(p):
            if seeds and int(r["seed"]) not in seeds:
                continue
            key = (r["size"] or "64x2", int(r["train_len"]), r["encoding"], int(r["n"]))
            out.setdefault(key, {})[int(r["seed"])] = float(r["exact_match"])
    return out


def cell(vals):
    """mean [lo, hi] k/N (per seed) for a list of exact matches."""
    if not vals:
        return "not run"
    m = statistics.mean(vals)
    k = sum(v >= 0.5 for v in vals)
    per = " / ".join("0" if v == 0 else "1" if v == 1 else f"{v:.3f}".lstrip("0") for v in vals)
    if len(vals) == 1:
        return f"{m:.3f} (1 seed; {k}/1)"
    h = T95.get(len(vals) - 1, 1.96) * statistics.stdev(vals) / len(vals) ** 0.5
    seeds = f" ({per})" if len(vals) <= 5 else ""
    return f"{m:.3f} [{max(0, m - h):.2f}, {min(1, m + h):.2f}] {k}/{len(vals)}{seeds}"


def size_table():
    blocks = sorted(glob.glob(os.path.join(HERE, "blocks", "size-*", "report.csv")))
    data = {"64x2, seeds 1-3": table([GRID], {1, 2, 3}), "64x2, 10 seeds": table([GRID])}
    for b in blocks:
        for k, v in table([b]).items():
            data.setdefault(k[0], {}).setdefault(k, {}).update(v)
    for b in sorted(glob.glob(os.path.join(HERE, "blocks", "budget-*", "report.csv"))):  # the same size, more steps
        steps = {r["steps"] for r in rows(b)}
        for k, v in table([b]).items():
            data.setdefault(f"{k[0]}, {'/'.join(sorted(steps))} steps", {}).setdefault(k, {}).update(v)
    print("| encoding | size | L = 16 | 1.25x (n = 20) | 1.5x (24) | 2x (32) |")
    print("|---|---|---|---|---|---|")
    for e in ENCS:
        for label, d in data.items():
            size = label.split(",")[0]
            cells = [cell([v for _, v in sorted(d.get((size, 16, e, n), {}).items())]) for n in (16, 20, 24, 32)]
            if all(c == "not run" for c in cells):
                continue
            print(f"| {e} | {label} | " + " | ".join(cells) + " |")


def learn_table():
    """Steps to learn (report.csv's steps_to_learn: the first evaluation, every 100 steps, at which greedy exact match
    on held-out lengths up to L reached 0.99; -1 never) and the final training loss per run, by encoding and size."""
    runs = {}
    budget = sorted(glob.glob(os.path.join(HERE, "blocks", "budget-*", "report.csv")))
    for p in [GRID] + sorted(glob.glob(os.path.join(HERE, "blocks", "size-*", "report.csv"))) + budget:
        for r in rows(p):
            if int(r["train_len"]) == 16 and int(r["n"]) == 16:
                size = (r["size"] or "64x2") + ("" if p == GRID or "size-" in p else f", {r['steps']} steps")
                runs.setdefault((r["encoding"], size), []).append(
                    (int(r["seed"]), int(r["steps_to_learn"]), float(r["final_loss"])))
    print("| encoding | size | seeds | learned L (seeds) | steps to learn (per seed; - never) | final loss (median) |")
    print("|---|---|---|---|---|---|")
    for e in ENCS:
        for size in sorted({z for (enc, z) in runs if enc == e}, key=lambda z: (len(z.split(",")[0]), z)):
            rs = sorted(runs.get((e, size), []))
            if not rs:
                continue
            steps = " / ".join(str(s) if s >= 0 else "-" for _, s, _ in rs)
            k = sum(s >= 0 for _, s, _ in rs)
            print(f"| {e} | {size} | {len(rs)} | {k}/{len(rs)} | {steps} | {statistics.median(l for _, _, l in rs):.2g} |")


def factor(d, L, e):
    """Largest tested n / L (n >= L) with exact match >= 0.5 in at least half the seeds; 0 if not even at L."""
    best = 0.0
    for (size, tl, enc, n), per in d.items():
        if tl == L and enc == e and n >= L and per and 2 * sum(v >= 0.5 for v in per.values()) >= len(per):
            best = max(best, n / L)
    return best


def length_table():
    d = table([GRID], {1, 2, 3})
    for L in (8, 32):
        for b in glob.glob(os.path.join(HERE, "blocks", f"len-{L}*", "report.csv")):
            for k, v in table([b]).items():
                d.setdefault(k, {}).update(v)
    Ls = [L for L in (8, 16, 32) if any(k[1] == L for k in d)]
    print("| encoding | L | L | 1.25L | 1.5L | 2L | factor |")
    print("|---|---|---|---|---|---|---|")
    fig = ["L " + " ".join(ENCS)]  # the extrapolation factor per encoding; 0 = not learned at L
    for e in ENCS:
        for L in Ls:
            cells = []
            for f in (1, 1.25, 1.5, 2):
                n = round(f * L)
                cells.append(cell([v for _, v in sorted(d.get(("64x2", L, e, n), {}).items())]))
            fa = factor(d, L, e)
            print(f"| {e} | {L} | " + " | ".join(cells) + f" | {fa:.3g}x |" if fa else f"| {e} | {L} | " + " | ".join(cells) + " | not learned at L |")
    for L in Ls:
        fig.append(f"{L} " + " ".join(f"{factor(d, L, e):.4g}" for e in ENCS))
    os.makedirs(os.path.join(HERE, "figures"), exist_ok=True)
    with open(os.path.join(HERE, "figures", "extrapolation_factor.dat"), "w") as f:
        f.write("\n".join(fig) + "\n")


if __name__ == "__main__":
    what = sys.argv[1:] or ["size", "learn", "length"]
    for w in what:
        {"size": size_table, "learn": learn_table, "length": length_table}[w]()
        print()
