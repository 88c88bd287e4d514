#!/usr/bin/python3
"""How much extrapolation moves after training has converged: a table from train_order's over-training logs.

Usage: tools/over_training_stats.py [--train-len L] [--from STEP] OUT_DIR [OUT_DIR ...]

Reads every OUT_DIR/runs/<task>-<encoding>[-<variant>]-seed<S>/extrap.csv (written with --extrap-every: per
evaluation step and test length, exact match on the first 32 samples of that length) and the run's train.csv, and
prints one Markdown row per (task, encoding, variant) over its seeds, for the window band L < n <= 1.5 L (the
per-step mean exact match over those lengths), restricted to the steps >= STEP (default 5000: half of the default
10000-step budget, when every learned run's training loss is below 0.01):

- runs: seeds with a log; learned: of those, seeds whose last logged exact match at n = L is >= 0.9 (only they
  are summarized: an unlearned run's window is noise around 0);
- at STEP and at the end: the band's mean over the learned seeds;
- late range: the median over the learned seeds of (max - min) of the band over the steps >= STEP;
- largest drop: the largest fall of the band between two consecutive evaluations at steps >= STEP, over all learned
  seeds (task, encoding, seed and step named);
- final < best - 0.1: learned seeds whose band at the last step is more than 0.1 below their best at steps >= STEP.

Zhou et al. 2024 report out-of-distribution accuracy fluctuating across steps after the training loss converged;
this table is how results/experiment-10seeds/README.md measures whether it does here.

Exit status: 0 success, 1 no readable log, 2 bad usage. Standard library only.
"""
import csv
import os
import re
import stat
import statistics
import sys
from collections import defaultdict

RUN = re.compile(r"^(?P<task>[a-z0-9_]+)-(?P<enc>[a-z0-9_-]+?)(?:-(?P<var>theta500k|rand|t5max128|bf16angles))?"
                 r"-seed(?P<seed>[0-9]+)$")


def read_log(path, L):
    """{step: (band mean over L < n <= 1.5 L, exact match at n = L)} of one extrap.csv; None (with a warning on
    stderr) if it is not a readable regular file of that layout. Rows with an empty value (n/a at a length) are
    skipped, as train_order's own plot skips them."""
    band, at_l = defaultdict(list), {}
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or a device
            raise OSError(f"{path}: not a regular file")
        with open(path, newline="", encoding="utf-8") as f:
            rows = csv.DictReader(f)
            if rows.fieldnames is None or any(c not in rows.fieldnames for c in ("step", "n", "exact_match")):
                raise ValueError("not a step,n,exact_match,token_acc header")
            for r in rows:
                if not r.get("exact_match"):
                    continue
                step, n, em = int(r["step"]), int(r["n"]), float(r["exact_match"])
                if not (0 <= em <= 1) or step < 0 or n < 1:
                    raise ValueError(f"a value out of range at step {step}")
                if L < n and 2 * n <= 3 * L:
                    band[step].append(em)
                elif n == L:
                    at_l[step] = em
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, UnicodeDecodeError, csv.Error) as e:
        print(f"over_training_stats.py: skipped {path}: {e}", file=sys.stderr)
        return None
    return {s: (statistics.mean(v), at_l.get(s)) for s, v in band.items()}


def main(argv):
    L, start, dirs = 16, 5000, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a in ("--train-len", "--from"):
            v = next(it, None)
            try:
                k = int(v) if v is not None and v.isascii() else -1
            except ValueError:
                k = -1
            if k < (1 if a == "--train-len" else 0):
                print(f"over_training_stats.py: {a} takes a {'positive' if a == '--train-len' else 'non-negative'} "
                      f"integer", file=sys.stderr)
                return 2
            L, start = (k, start) if a == "--train-len" else (L, k)
        elif a.startswith("-"):
            print(f"over_training_stats.py: unknown option {a}", file=sys.stderr)
            return 2
        else:
            dirs.append(a)
    if not dirs:
        print("usage: tools/over_training_stats.py [--train-len L] [--from STEP] OUT_DIR [OUT_DIR ...]", file=sys.stderr)
        return 2
    rows = defaultdict(dict)  # (task, enc, var) -> {seed: {step: (band, at_l)}}
    for d in dirs:
        runs = os.path.join(d, "runs")
        try:
            names = sorted(os.listdir(runs)) if os.path.isdir(runs) else []
        except OSError as e:
            print(f"over_training_stats.py: {runs}: {e.strerror}", file=sys.stderr)
            return 1
        for name in names:
            m = RUN.match(name)
            log = read_log(os.path.join(runs, name, "extrap.csv"), L) if m else None
            if m and log:
                rows[(m["task"], m["enc"], m["var"] or "base")][int(m["seed"])] = log
    if not rows:
        print("over_training_stats.py: no readable runs/<run>/extrap.csv under " + ", ".join(dirs), file=sys.stderr)
        return 1
    print(f"| task | encoding | runs | learned | band at {start} | band at end | late range (median) | largest drop "
          f"| final < best - 0.1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        seeds = rows[key]
        learned = {}
        for s, log in seeds.items():
            last = max(log)
            late = {st: v[0] for st, v in log.items() if st >= start}
            if log[last][1] is not None and log[last][1] >= 0.9 and late:
                learned[s] = late
        if not learned:
            print(f"| {key[0]} | {key[1]}{'' if key[2] == 'base' else ' ' + key[2]} | {len(seeds)} | 0 | | | | | |")
            continue
        first = [v[min(v)] for v in learned.values() if v]
        end = [v[max(v)] for v in learned.values() if v]
        ranges = [max(v.values()) - min(v.values()) for v in learned.values() if v]
        drop, where, below = 0.0, "", 0
        for s, v in learned.items():
            steps = sorted(v)
            for a, b in zip(steps, steps[1:]):
                if v[a] - v[b] > drop:
                    drop, where = v[a] - v[b], f"seed {s}, {a} -> {b}"
            below += bool(steps) and v[steps[-1]] < max(v.values()) - 0.1
        label = key[1] if key[2] == "base" else f"{key[1]} {key[2]}"
        print(f"| {key[0]} | {label} | {len(seeds)} | {len(learned)} | {statistics.mean(first):.3f} | "
              f"{statistics.mean(end):.3f} | {statistics.median(ranges):.3f} | {drop:.3f} ({where}) | "
              f"{below}/{len(learned)} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
