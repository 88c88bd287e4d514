#!/usr/bin/python3
"""The README's Results tables from a train_order report.csv (stdlib only).

Usage: tools/results_table.py REPORT.csv [OLD.csv]
       tools/results_table.py --first K REPORT.csv

Prints, per task, one Markdown table: a row per encoding (and RoPE extension), a column per test length; a cell is
the exact match mean ± sd over the seeds, "k/N" (seeds with exact match >= 0.5) and the mean token accuracy in
parentheses. A row whose mean exact match at the training length is below 0.9 is marked ✗ (as report.md does).

With OLD.csv (an earlier run of the same grid), it also checks the seeds the two runs share: the same seed, task,
encoding and length must give the same numbers (training is deterministic), and prints how many cells agree.

With --first K, it lists the cells where the verdict of the first K seeds differs from the verdict of all the
seeds: a verdict is "never" (no seed reaches exact match 0.5), "always" (every seed does) or "sometimes".
"""
import csv
import statistics
import sys
from collections import defaultdict

ORDER = ["none", "sinusoidal", "learned", "t5", "xl", "alibi", "rope", "rope-half", "fire"]
EXTS = ["none", "pi", "ntk", "yarn", "llama3"]


def load(path):
    cells = defaultdict(dict)  # (task, encoding, ext, n) -> {seed: (em, tok)}
    train_len = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["task"], r["encoding"], r["rope_ext"], int(r["n"]))
            cells[key][int(r["seed"])] = (float(r["exact_match"]), float(r["token_acc"]))
            train_len[r["task"]] = int(r["train_len"])
    return cells, train_len


def row_name(enc, ext):
    return enc if ext == "none" else f"{enc}+{ext}"


def table(cells, task, L):
    lens = sorted({k[3] for k in cells if k[0] == task})
    rows = sorted({(k[1], k[2]) for k in cells if k[0] == task},
                  key=lambda r: (ORDER.index(r[0]) if r[0] in ORDER else 99, EXTS.index(r[1]) if r[1] in EXTS else 99))
    head = " | ".join(f"n={n}" + (" (train)" if n == L else "") for n in lens)
    print(f"| encoding | seeds | {head} |")
    print("|---|---|" + "---|" * len(lens))
    for enc, ext in rows:
        seeds = cells.get((task, enc, ext, L), {})
        mark = " ✗" if seeds and statistics.mean(v[0] for v in seeds.values()) < 0.9 else ""
        out = []
        for n in lens:
            v = cells.get((task, enc, ext, n))
            if not v:
                out.append("n/a")
                continue
            em = [x[0] for x in v.values()]
            tok = statistics.mean(x[1] for x in v.values())
            sd = f" ± {statistics.stdev(em):.3f}" if len(em) > 1 else ""
            k = sum(e >= 0.5 for e in em)
            out.append(f"{statistics.mean(em):.3f}{sd} · {k}/{len(em)} ({tok:.3f})")
        n_seeds = max(len(cells[(task, enc, ext, n)]) for n in lens if (task, enc, ext, n) in cells)
        print(f"| {row_name(enc, ext)}{mark} | {n_seeds} | " + " | ".join(out) + " |")


def check_shared(new, old):
    same = differ = 0
    worst = []
    for key, seeds in old.items():
        for seed, v in seeds.items():
            w = new.get(key, {}).get(seed)
            if w is None:
                continue
            if w == v:
                same += 1
            else:
                differ += 1
                worst.append((abs(w[0] - v[0]), key, seed, v, w))
    print(f"shared (task, encoding, extension, n, seed) cells: {same + differ}, identical: {same}, differ: {differ}")
    for d in sorted(worst, reverse=True)[:10]:
        print("  differs:", d)


def verdict(em):
    k = sum(e >= 0.5 for e in em)
    return "never" if k == 0 else "always" if k == len(em) else "sometimes"


def first_k(cells, k):
    changed = 0
    total = 0
    for key in sorted(cells, key=lambda c: (c[0], ORDER.index(c[1]) if c[1] in ORDER else 99, EXTS.index(c[2]), c[3])):
        seeds = cells[key]
        if len(seeds) <= k:
            continue
        total += 1
        few = [seeds[s][0] for s in sorted(seeds)[:k]]
        em = [v[0] for v in seeds.values()]
        if verdict(few) != verdict(em):
            changed += 1
            print(f"| {key[0]} | {row_name(key[1], key[2])} | {key[3]} | {verdict(few)} ({sum(e >= 0.5 for e in few)}/{k}, "
                  f"mean {statistics.mean(few):.3f}) | {verdict(em)} ({sum(e >= 0.5 for e in em)}/{len(em)}, "
                  f"mean {statistics.mean(em):.3f}) |")
    print(f"\n{changed} of {total} cells change verdict between the first {k} seeds and all of them")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--first":
        first_k(load(sys.argv[3])[0], int(sys.argv[2]))
        return 0
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cells, train_len = load(sys.argv[1])
    for task in ["copy", "reverse", "sort"]:
        if task in train_len:
            print(f"### {task}\n")
            table(cells, task, train_len[task])
            print()
    if len(sys.argv) == 3:
        check_shared(cells, load(sys.argv[2])[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
