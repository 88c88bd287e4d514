#!/usr/bin/python3
"""The README's Results tables from a train_order report.csv (stdlib only).

Usage: tools/results_table.py REPORT.csv [OLD.csv]
       tools/results_table.py --first K REPORT.csv
       tools/results_table.py --interval LENS EXTS REPORT.csv

Prints, per task, one Markdown table: a row per encoding, training variant and RoPE scaling type (labelled as
train_order labels them: "rope", "rope θ=500k", "alibi+rand", "rope+yarn", "rope+yarn:4"), a column per test
length; a cell is the exact match mean ± sd over the seeds, "k/N" (seeds with exact match >= 0.5) and the mean
token accuracy in parentheses; n/a where no seed has a value. A row whose mean exact match at the training length is
below 0.9 is marked ✗ (as report.md does).

With OLD.csv (an earlier run of the same grid), it also checks the seeds the two runs share: the same seed, task,
row and length must give the same numbers (training is deterministic), and prints how many cells agree.

With --first K, it lists the cells where the verdict of the first K seeds differs from the verdict of all the
seeds: a verdict is "never" (no seed reaches exact match 0.5), "always" (every seed does) or "sometimes".

With --interval, one compact table for all tasks (the results/experiment-* READMEs): a row per task, encoding
(base variant) and RoPE scaling type in the comma list EXTS (e.g. none,pi), a column per test length in the comma
list LENS; a cell is "mean [lo, hi] k/N": the exact match mean over the seeds, its 95% Student-t interval clipped to
[0, 1] (as train_order's report_cells.csv) and the seeds reaching 0.5; "0" where every seed is 0.

Exit status: 0 success, 1 an unreadable or invalid report, 2 bad usage.
"""
import csv
import math
import os
import stat
import statistics
import sys
from collections import defaultdict

ORDER = ["none", "sinusoidal", "learned", "t5", "xl", "alibi", "rope", "rope-half", "fire"]
VARIANTS = ["base", "theta500k", "rand"]
EXTS = ["none", "pi", "ntk", "yarn", "llama3", "dynamic"]
NEEDED = ["task", "encoding", "rope_ext", "seed", "n", "exact_match", "token_acc"]


class Invalid(Exception):
    pass


def number(text, what, where):
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise Invalid(f"{where}: {what} '{text}' is not a number")
    return v


def load(path):
    """(cells, train_len): cells[(task, encoding, variant, ext, n)] = {seed: (exact, token)}; NaN = not evaluated."""
    cells = defaultdict(dict)
    train_len = {}
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise Invalid(f"{path}: not a regular file")
        with open(path, newline="", encoding="utf-8") as f:
            rows = csv.DictReader(f)
            missing = [c for c in NEEDED if c not in (rows.fieldnames or [])]
            if missing:
                raise Invalid(f"{path}: not a train_order report.csv (no column {', '.join(missing)})")
            for i, r in enumerate(rows, start=2):
                where = f"{path}, line {i}"
                if any(r.get(c) is None for c in NEEDED):
                    raise Invalid(f"{where}: too few fields")
                seed, n = number(r["seed"], "seed", where), number(r["n"], "n", where)
                if not (math.isfinite(seed) and math.isfinite(n)) or seed != int(seed) or n != int(n) or seed < 1 \
                        or n < 1:
                    raise Invalid(f"{where}: seed {r['seed']} or n {r['n']} is not a positive integer")
                em, tok = number(r["exact_match"], "exact_match", where), number(r["token_acc"], "token_acc", where)
                for v in (em, tok):
                    if not math.isnan(v) and not 0 <= v <= 1:
                        raise Invalid(f"{where}: accuracy {v} is outside [0, 1]")
                key = (r["task"], r["encoding"], r.get("variant") or "base", r["rope_ext"], int(n))
                if int(seed) in cells[key]:
                    raise Invalid(f"{where}: a second line for {key} seed {int(seed)}")
                cells[key][int(seed)] = (em, tok)
                if r.get("train_len"):
                    tl = number(r["train_len"], "train_len", where)
                    if not math.isfinite(tl) or tl != int(tl) or tl < 1:
                        raise Invalid(f"{where}: train_len {r['train_len']} is not a positive integer")
                    train_len[r["task"]] = int(tl)
    except OSError as e:
        raise Invalid(f"{path}: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        raise Invalid(f"{path}: not a CSV text file ({e})")
    if not cells:
        raise Invalid(f"{path}: no results")
    return cells, train_len


def rank(name, names):
    return (names.index(name), "") if name in names else (len(names), name)


def row_key(row):
    enc, var, ext = row
    base_ext = ext.split(":")[0]
    return rank(enc, ORDER), rank(var, VARIANTS), rank(base_ext, EXTS), ext


def label(enc, var, ext):
    v = " θ=500k" if var == "theta500k" else "+rand" if var == "rand" else ""
    return enc + v + ("" if ext == "none" else "+" + ext)


def values(seeds):
    return [v for v in seeds.values() if not math.isnan(v[0])]


def cell_text(seeds):
    v = values(seeds)
    if not v:
        return "n/a"
    em = [x[0] for x in v]
    tok = [x[1] for x in v if not math.isnan(x[1])]
    sd = f" ± {statistics.stdev(em):.3f}" if len(em) > 1 else ""
    k = sum(e >= 0.5 for e in em)
    tok_text = f" ({statistics.mean(tok):.3f})" if tok else ""
    return f"{statistics.mean(em):.3f}{sd} · {k}/{len(em)}{tok_text}"


def table(cells, task, L):
    lens = sorted({k[4] for k in cells if k[0] == task})
    rows = sorted({k[1:4] for k in cells if k[0] == task}, key=row_key)
    head = " | ".join(f"n={n}" + (" (train)" if n == L else "") for n in lens)
    print(f"| encoding | seeds | {head} |")
    print("|---|---|" + "---|" * len(lens))
    for row in rows:
        at_l = values(cells.get((task, *row, L), {}))
        mark = " ✗" if at_l and statistics.mean(x[0] for x in at_l) < 0.9 else ""
        n_seeds = max(len(cells[(task, *row, n)]) for n in lens if (task, *row, n) in cells)
        out = [cell_text(cells.get((task, *row, n), {})) for n in lens]
        print(f"| {label(*row)}{mark} | {n_seeds} | " + " | ".join(out) + " |")


def same(a, b):
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


def check_shared(new, old):
    agree = differ = 0
    worst = []
    for key, seeds in old.items():
        for seed, v in seeds.items():
            w = new.get(key, {}).get(seed)
            if w is None:
                continue
            if same(w, v):
                agree += 1
            else:
                differ += 1
                worst.append((abs(w[0] - v[0]), key, seed, v, w))
    print(f"shared (task, encoding, variant, extension, n, seed) cells: {agree + differ}, identical: {agree}, "
          f"differ: {differ}")
    for d in sorted(worst, key=lambda x: -x[0] if not math.isnan(x[0]) else 0)[:10]:
        print("  differs:", d)


def verdict(em):
    k = sum(e >= 0.5 for e in em)
    return "never" if k == 0 else "always" if k == len(em) else "sometimes"


def first_k(cells, k):
    changed = total = 0
    print(f"| task | row | n | first {k} seeds | all seeds |")
    print("|---|---|---|---|---|")
    for key in sorted(cells, key=lambda c: (c[0], row_key(c[1:4]), c[4])):
        v = sorted((s, x[0]) for s, x in cells[key].items() if not math.isnan(x[0]))
        if len(v) <= k:
            continue
        total += 1
        few = [e for _, e in v[:k]]
        em = [e for _, e in v]
        if verdict(few) != verdict(em):
            changed += 1
            print(f"| {key[0]} | {label(*key[1:4])} | {key[4]} | {verdict(few)} ({sum(e >= 0.5 for e in few)}/{k}, "
                  f"mean {statistics.mean(few):.3f}) | {verdict(em)} ({sum(e >= 0.5 for e in em)}/{len(em)}, "
                  f"mean {statistics.mean(em):.3f}) |")
    print(f"\n{changed} of {total} cells (with more than {k} seeds) change verdict between the first {k} seeds and "
          f"all of them")


# two-sided 95% Student-t quantiles t(0.975, df), df = 1..30 (train_order computes them: stats.c, eng_t_quantile)
T975 = [12.7062047, 4.30265273, 3.18244631, 2.77644511, 2.57058184, 2.44691185, 2.36462425, 2.30600414, 2.26215716,
        2.22813885, 2.20098516, 2.17881283, 2.16036866, 2.14478669, 2.13144955, 2.11990530, 2.10981558, 2.10092204,
        2.09302405, 2.08596345, 2.07961384, 2.07387307, 2.06865761, 2.06389856, 2.05953855, 2.05552944, 2.05183052,
        2.04840714, 2.04522964, 2.04227246]


def short(v):
    """.952, 1, 0: three decimals without the leading zero"""
    text = f"{v:.3f}"
    return "1" if text == "1.000" else "0" if text == "0.000" else text.lstrip("0")


def interval_text(seeds):
    em = [x[0] for x in values(seeds)]
    if not em:
        return "n/a"
    if max(em) == 0:
        return "0"
    m = statistics.mean(em)
    k = sum(e >= 0.5 for e in em)
    if len(em) < 2:
        return f"{short(m)} {k}/1"
    if len(em) - 1 > len(T975):
        raise Invalid(f"{len(em)} seeds: --interval knows the t quantiles up to {len(T975) + 1} seeds")
    h = T975[len(em) - 2] * statistics.stdev(em) / math.sqrt(len(em))
    return f"{short(m)} [{short(max(0.0, m - h))}, {short(min(1.0, m + h))}] {k}/{len(em)}"


def interval_table(cells, train_len, lens, exts):
    tasks = sorted({k[0] for k in cells}, key=lambda t: rank(t, ["copy", "reverse", "sort"]))
    L = {train_len.get(t) for t in tasks}
    head = " | ".join(f"n={n}" + (" (train)" if n in L else "") for n in lens)
    lines = []  # the whole table first: an error stops it before any line is printed
    for task in tasks:
        rows = sorted({k[1:4] for k in cells if k[0] == task and k[2] == "base" and k[3] in exts}, key=row_key)
        for row in rows:
            at_l = values(cells.get((task, *row, train_len.get(task)), {}))
            mark = " ✗" if at_l and statistics.mean(x[0] for x in at_l) < 0.9 else ""
            out = [interval_text(cells.get((task, *row, n), {})) for n in lens]
            lines.append(f"| {task} | {label(*row)}{mark} | " + " | ".join(out) + " |")
    if not lines:
        raise Invalid(f"no base rows with the scaling types {','.join(exts)} (the report's: "
                      f"{','.join(sorted({k[3] for k in cells}))})")
    print(f"| task | encoding | {head} |")
    print("|---|---|" + "---|" * len(lens))
    print("\n".join(lines))


def int_list(text, what):
    try:
        v = [int(x) for x in text.split(",")]
    except ValueError:
        v = []
    if not v or any(x < 1 for x in v):
        raise ValueError(f"{what} {text}: expected a comma list of positive integers")
    return v


def usage(msg):
    print(f"results_table.py: {msg}", file=sys.stderr)
    print("usage: tools/results_table.py REPORT.csv [OLD.csv] | --first K REPORT.csv | "
          "--interval LENS EXTS REPORT.csv | --help", file=sys.stderr)
    return 2


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv and argv[0] == "--first":
        if len(argv) != 3:
            return usage("--first takes K and one report")
        try:
            k = int(argv[1])
        except ValueError:
            k = 0
        if k < 1:
            return usage(f"--first {argv[1]}: K must be a positive integer")
        first_k(load(argv[2])[0], k)
        return 0
    if argv and argv[0] == "--interval":
        if len(argv) != 4:
            return usage("--interval takes LENS, EXTS and one report")
        try:
            lens = int_list(argv[1], "LENS")
        except ValueError as e:
            return usage(str(e))
        exts = argv[2].split(",")
        cells, train_len = load(argv[3])
        interval_table(cells, train_len, lens, exts)
        return 0
    if len(argv) not in (1, 2) or any(a.startswith("-") for a in argv):
        return usage("expected one or two report.csv files")
    cells, train_len = load(argv[0])
    old = load(argv[1])[0] if len(argv) == 2 else None  # both files are checked before anything is printed
    for task in sorted({k[0] for k in cells}, key=lambda t: rank(t, ["copy", "reverse", "sort"])):
        if task not in train_len:
            raise Invalid(f"{argv[0]}: no train_len column (needed to mark the training length)")
        print(f"### {task}\n")
        table(cells, task, train_len[task])
        print()
    if old is not None:
        check_shared(cells, old)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Invalid as e:
        print(f"results_table.py: {e}", file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:  # the reader stopped early (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
