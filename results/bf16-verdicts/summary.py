#!/usr/bin/env python3
"""summary.py: the paired fp32 / bf16 verdict table of this folder, from fp32/report_cells.csv and
bf16/report_cells.csv (as train_order wrote them), and the language model's perplexity from lm-fp32/ and lm-bf16/: exact match at n = L, 1.25 L, 1.5 L and 2 L per task and encoding,
mean [95% t interval] and k/N (seeds reaching 0.5) for each precision, and whether the verdict (k/N) differs.
Run from the repository's root or this folder: python3 results/bf16-verdicts/summary.py"""
import csv, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))

def cells(prec):
    out = {}
    with open(os.path.join(HERE, prec, "report_cells.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["metric"] != "exact_match" or r["variant"] != "base" or r["rope_ext"] != "none":
                continue
            out[(r["task"], r["encoding"], int(r["n"]))] = r
    return out

def fmt(r):
    if r is None:
        return "not run"
    m = float(r["mean"])
    if r["ci95_t_lo"] == "":  # one seed: no interval
        return f"{m:.3f} {r['k_reaching_0.5']}/{r['n_seeds']}"
    lo, hi = float(r["ci95_t_lo"]), float(r["ci95_t_hi"])
    return f"{m:.3f} [{lo:.3f}, {hi:.3f}] {r['k_reaching_0.5']}/{r['n_seeds']}"

def main():
    a, b = cells("fp32"), cells("bf16")
    keys = sorted({(t, e) for (t, e, _) in a} | {(t, e) for (t, e, _) in b})
    L = 16
    ns = [L, L + L // 4, L + L // 2, 2 * L]
    print("| task | encoding | n | fp32 mean [95% t] k/N | bf16 mean [95% t] k/N | verdict |")
    print("|---|---|---|---|---|---|")
    changed = 0
    for t, e in keys:
        for n in ns:
            ra, rb = a.get((t, e, n)), b.get((t, e, n))
            if ra is None and rb is None:
                continue
            paired = ra is not None and rb is not None and ra["n_seeds"] == rb["n_seeds"]
            same = paired and ra["k_reaching_0.5"] == rb["k_reaching_0.5"]
            changed += 1 if paired and not same else 0
            v = "same" if same else ("differs" if paired else "unpaired (seeds differ)")
            print(f"| {t} | {e} | {n} | {fmt(ra)} | {fmt(rb)} | {v} |")
    print(f"\nverdicts that differ: {changed}\n")
    lm_table()
    return 0

def lm_ppl(prec):
    out = {}
    with open(os.path.join(HERE, "lm-" + prec, "lm_report.csv"), newline="") as f:
        for r in csv.DictReader(f):
            out[(r["pos"], r["method"], r["ratio"])] = float(r["median_ppl"])
    return out

def lm_table():
    """The language model's perplexity (one seed) at L, 2L, 4L, 8L in both precisions and their relative gap."""
    a, b = lm_ppl("fp32"), lm_ppl("bf16")
    print("| encoding | method | context | fp32 | bf16 | bf16 / fp32 - 1 |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for k in sorted(a):
        if k[2] not in ("1", "2", "4", "8") or k not in b or a[k] != a[k]:
            continue
        gap = b[k] / a[k] - 1
        if k[2] == "1":
            worst = max(worst, abs(gap))
        print(f"| {k[0]} | {k[1]} | {k[2]}L | {a[k]:.3f} | {b[k]:.3f} | {100 * gap:+.2f}% |")
    print(f"\nlargest gap at L: {100 * worst:.2f}%")

if __name__ == "__main__":
    sys.exit(main())
