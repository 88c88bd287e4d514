"""Prints README.md's tables from the blocks' report_cells.csv (run from the worktree's root):
python3 results/mrope-frames/summary.py. Exact match (and token accuracy): mean [95% t interval] k/N per cell."""
import csv, glob, os

SIZES = ["344", "444", "644", "355", "366", "388"]
NAMES = {"344": "3x4x4 (train)", "444": "4x4x4", "644": "6x4x4", "355": "3x5x5", "366": "3x6x6", "388": "3x8x8"}


def fmt(r, interval):
    m = float(r["mean"])
    s = "%.2f" % m
    if interval and r["ci95_t_lo"]:
        s += " [%.2f, %.2f]" % (float(r["ci95_t_lo"]), float(r["ci95_t_hi"]))
    return s + " %s/%s" % (r["k_reaching_0.5"], r["n_seeds"])


for metric in ("exact_match", "token_acc"):
    print("\n%s\n" % metric)
    print("| block | head_dim | task (numbering) | encoding | " + " | ".join(NAMES[s] for s in SIZES) + " |")
    print("|---" * (4 + len(SIZES)) + "|")
    for d in sorted(glob.glob("results/mrope-frames/b*/report_cells.csv"), key=lambda f: int(f.split("/")[2].split("-")[0][1:])):
        block = os.path.basename(os.path.dirname(d))
        hd = "32" if "hd32" in block else "16"
        il = (" interleaved" if "interl" in block else "") + (" theta 10" if "theta10" in block else "") + (" 6000 steps" if "6000" in block else "")
        cells = {}
        for r in csv.DictReader(open(d)):
            if r["metric"] == metric:
                cells[(r["task"], r["encoding"], r["n"])] = r
        for task, enc in sorted({(t, e) for t, e, _ in cells}):
            row = [fmt(cells[(task, enc, s)], s in ("344", "644", "355")) if (task, enc, s) in cells else "-"
                   for s in SIZES]
            print("| %s | %s | %s | %s%s | %s |" % (block.split("-")[0], hd, task, enc, il, " | ".join(row)))

print("\nfinal training loss per seed (report.csv), steps to 0.99 held-out exact match (-1: not reached)\n")
print("| block | task | encoding | final loss, seeds 1..3 | steps to 0.99 |")
print("|---|---|---|---|---|")
for d in sorted(glob.glob("results/mrope-frames/b*/report.csv"), key=lambda f: int(f.split("/")[2].split("-")[0][1:])):
    block = os.path.basename(os.path.dirname(d))
    runs = {}
    for r in csv.DictReader(open(d)):
        if r["rope_ext"] == "none":
            runs.setdefault((r["task"], r["encoding"]), {})[r["seed"]] = (float(r["final_loss"]), r["steps_to_learn"])
    for (task, enc), s in sorted(runs.items()):
        seeds = sorted(s, key=int)
        print("| %s | %s | %s | %s | %s |" % (block.split("-")[0], task, enc, " / ".join("%.3f" % s[k][0] for k in seeds),
                                              " / ".join(s[k][1] for k in seeds)))
