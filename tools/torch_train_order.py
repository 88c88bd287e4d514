#!/usr/bin/python3
"""PyTorch cross-check of examples/train_order (issue 7, "Cross-check"); see docs/crosscheck.md.

    /usr/bin/python3 tools/torch_train_order.py train --task copy --pos rope [--seeds 1,2,3] [--steps 3000]
                     [--rope-ext none|all|pi,ntk,...] [--out torch.csv] [--compare-csv out/report.csv]
    /usr/bin/python3 tools/torch_train_order.py eval --ckpt out/ckpt/copy-rope-seed1.h5
                     [--rope-ext ...] [--out torch.csv] [--compare-csv out/report.csv]

train: trains tools/ref_model.py's Model with the C program's hyperparameters (AdamW lr 1e-3, betas (0.9, 0.98),
eps 1e-8, weight decay 0.01 on 2-D parameters, grad-norm clip 1.0, 100 warmup steps then cosine to 0.1 lr, batch 64,
n uniform in 1..train-len, right-padded batches, loss on the n+1 positions predicting y and EOS, the C model's
initialization); batches come from torch's RNG seeded with the seed (not the C program's batches), so the
comparison with a C run is statistical (--compare-csv: mean and sd over seeds, side by side).
eval: loads a C checkpoint (tools/ckpt_to_torch.py) and evaluates it; with --compare-csv (the C report.csv of an
--eval of the same checkpoint) the numbers must be identical; the verdict compares the integer counts.

Evaluation (both modes): greedy decoding on data/eval_sets.h5, prompt BOS x SEP, n+1 argmax tokens (torch.argmax:
ties go to the first, lowest id), no early stop, the full forward recomputed at each step in float32 (no KV cache);
exact_match = all n+1 right, token_acc = the fraction right. RoPE rows beyond the training length can be evaluated
with the extensions at s = (2n+3)/(2 L_train+3) (rope_orig_len = 2 L_train+3), as the C program does.
The CSV has the C report.csv's columns.  Needs Debian's python3-torch, python3-h5py, python3-numpy.
"""
import argparse
import csv
import math
import os
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):   # before torch: one core by default
    os.environ.setdefault(_v, "1")

import h5py
import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_model as R  # noqa: E402
from ckpt_to_torch import read_checkpoint  # noqa: E402

PAD, BOS, SEP, EOS, SYM0, NSYM, VOCAB = 0, 1, 2, 3, 4, 26, 30
TASKS = ("copy", "reverse", "sort")
EXTS = ("pi", "ntk", "yarn", "llama3")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV_COLS = ["task", "encoding", "rope_ext", "seed", "steps", "final_loss", "train_seconds", "n", "exact_match",
            "token_acc"]


# ------------------------------------------------------------------ task

def targets(task, x):
    """x int64 [B, n] content symbols -> y [B, n]."""
    if task == "copy":
        return x.clone()
    if task == "reverse":
        return x.flip(-1)
    if task == "sort":
        return x.sort(-1).values
    raise ValueError(task)


def sample_batch(task, gen, batch, train_len):
    """A training batch as in src/task/task.h: row b = BOS x SEP y (EOS is only a target), right-padded with PAD to
    T = 2 max n + 2; targets[b, p] = t[p+1] for p = n+1..2n+1, -100 elsewhere."""
    n = torch.randint(1, train_len + 1, (batch,), generator=gen)
    x = torch.randint(SYM0, SYM0 + NSYM, (batch, train_len), generator=gen)
    T = 2 * int(n.max()) + 2
    tokens = torch.full((batch, T), PAD, dtype=torch.long)
    tgt = torch.full((batch, T), R.IGNORE_INDEX, dtype=torch.long)
    for b in range(batch):
        nb = int(n[b])
        xb = x[b, :nb]
        t = torch.cat([torch.tensor([BOS]), xb, torch.tensor([SEP]), targets(task, xb[None])[0],
                       torch.tensor([EOS])])                     # 2n+3 tokens
        tokens[b, :2 * nb + 2] = t[:-1]
        tgt[b, nb + 1:2 * nb + 2] = t[nb + 2:]
    return tokens, tgt


# ------------------------------------------------------------------ model

def make_model(pos, seed):
    """The reference config with the C model's initialization (src/nn/model.c), drawn from torch's RNG."""
    cfg = R.Config(vocab_size=VOCAB, d_model=64, n_heads=4, n_layers=2, d_ff=256, max_len=160, pos_encoding=pos)
    torch.manual_seed(seed)
    model = R.Model(cfg)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, 0.0, 0.02)
                if getattr(mod, "bias", None) is not None:
                    nn.init.zeros_(mod.bias)
            elif isinstance(mod, nn.LayerNorm):
                nn.init.ones_(mod.weight)
                nn.init.zeros_(mod.bias)
            elif isinstance(mod, R.Attention) and mod.xl:
                nn.init.zeros_(mod.u)
                nn.init.zeros_(mod.v)
        if pos == "sinusoidal":
            nn.init.normal_(model.tok_emb.weight, 0.0, cfg.d_model ** -0.5)
    return model


def train(model, task, seed, steps, batch, train_len, lr, log_every):
    gen = torch.Generator()
    gen.manual_seed(seed)
    opt = torch.optim.AdamW(R.decay_param_groups(model, 0.01), lr=lr, betas=(0.9, 0.98), eps=1e-8, foreach=False)
    model.train()
    ema, t0, c0 = float("nan"), time.time(), time.process_time()
    for s in range(steps):
        tokens, tgt = sample_batch(task, gen, batch, train_len)
        opt.zero_grad(set_to_none=True)
        loss = R.lm_loss(model(tokens), tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        cur = R.lr_schedule(s, lr, 100, steps, 0.1)
        for g in opt.param_groups:
            g["lr"] = cur
        opt.step()
        li = loss.item()
        if not math.isfinite(li):
            raise RuntimeError(f"loss is {li} at step {s + 1}")
        ema = li if math.isnan(ema) else 0.98 * ema + 0.02 * li   # the C program's reported loss
        if (s + 1) % log_every == 0 or s + 1 == steps:
            el = time.time() - t0
            cpu = time.process_time() - c0
            print(f"  step {s + 1}/{steps} loss {ema:.4f} {el / (s + 1) * 1000:.1f} ms/step "
                  f"({cpu / (s + 1) * 1000:.1f} ms CPU) ETA {el / (s + 1) * (steps - s - 1):.0f}s", file=sys.stderr, flush=True)
    return ema, time.time() - t0


# ------------------------------------------------------------------ evaluation

def load_evalset(path, task, n):
    with h5py.File(path, "r") as f:
        g = f[f"{task}/n{n}"]
        return torch.from_numpy(g["x"][()].astype(np.int64)), torch.from_numpy(g["y"][()].astype(np.int64))


@torch.no_grad()
def greedy(model, x, chunk):
    """x [N, n] -> generated [N, n+1]: prompt BOS x SEP, n+1 argmax steps, full forward each step."""
    N, n = x.shape
    out = []
    for s0 in range(0, N, chunk):
        xb = x[s0:s0 + chunk]
        B = xb.shape[0]
        seq = torch.cat([torch.full((B, 1), BOS), xb, torch.full((B, 1), SEP)], 1)
        for _ in range(n + 1):
            nxt = model(seq)[:, -1].argmax(-1)          # first max on ties = lowest id
            seq = torch.cat([seq, nxt[:, None]], 1)
        out.append(seq[:, n + 2:])
    return torch.cat(out)


def set_rope(model, ext, n, train_len):
    """As src/engine/run/run.c: s = (2n+3)/(2 L_train+3); the extension only when s > 1."""
    cfg = model.cfg
    L_tokens = 2 * train_len + 3
    s = (2 * n + 3) / L_tokens
    cfg.rope_ext = ext if (ext != "none" and s > 1) else "none"
    cfg.rope_scale = s if s > 1 else 1.0
    cfg.rope_orig_len = L_tokens


def evaluate(model, task, exts, lens, train_len, data, chunk):
    """Returns {(ext, n): (exact_count, correct_tokens, samples, tokens)}."""
    model.eval()
    pos = model.cfg.pos_encoding
    variants = ["none"] + ([e for e in exts if e != "none"] if pos in ("rope", "rope-half") else [])
    res = {}
    for ext in variants:
        for n in lens:
            x, y = load_evalset(data, task, n)
            if pos == "learned" and 2 * n + 2 > model.cfg.max_len:
                res[(ext, n)] = None                       # positions past the learned table: n/a
                continue
            set_rope(model, ext, n, train_len)
            t0 = time.time()
            gen = greedy(model, x, chunk)
            want = torch.cat([y, torch.full((y.shape[0], 1), EOS)], 1)
            right = gen == want
            res[(ext, n)] = (int(right.all(1).sum()), int(right.sum()), right.shape[0], right.numel())
            e = res[(ext, n)]
            print(f"  eval {task}/{pos}{'+' + ext if ext != 'none' else ''} n={n}: exact {e[0]}/{e[2]} "
                  f"tokens {e[1]}/{e[3]} ({time.time() - t0:.1f}s)", file=sys.stderr, flush=True)
    set_rope(model, "none", 0, train_len)
    return res


# ------------------------------------------------------------------ output and comparison

def fmt(v):
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:g}"


def result_rows(task, pos, seed, steps, final_loss, train_s, res):
    rows = []
    for (ext, n), e in res.items():
        em = float("nan") if e is None else e[0] / e[2]
        ta = float("nan") if e is None else e[1] / e[3]
        rows.append(dict(task=task, encoding=pos, rope_ext=ext, seed=seed, steps=steps, final_loss=final_loss,
                         train_seconds=train_s, n=n, exact_match=em, token_acc=ta, _counts=e))
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLS)
        for r in rows:
            w.writerow([r["task"], r["encoding"], r["rope_ext"], r["seed"], r["steps"], fmt(r["final_loss"]),
                        f"{r['train_seconds']:.3f}", r["n"], fmt(r["exact_match"]), fmt(r["token_acc"])])


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def print_table(rows):
    keys = sorted({(r["task"], r["encoding"], r["rope_ext"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2] != "none", k[2]))
    lens = sorted({r["n"] for r in rows})
    for k in keys:
        print(f"\n{k[0]} / {k[1]}{'' if k[2] == 'none' else ' + ' + k[2]}  (exact_match  token_acc; per seed)")
        print(f"{'n':>4}  {'seed':>4}  {'exact_match':>11}  {'token_acc':>9}")
        for n in lens:
            for r in sorted((r for r in rows if (r["task"], r["encoding"], r["rope_ext"]) == k and r["n"] == n),
                            key=lambda r: r["seed"]):
                print(f"{n:>4}  {r['seed']:>4}  {fmt(r['exact_match']):>11}  {fmt(r['token_acc']):>9}")


def compare_exact(rows, c_rows):
    """Checkpoint mode: the same model, the same data: the counts must be equal. Returns the number of mismatches."""
    print("\ncomparison with the C report (same checkpoint: must be identical)")
    print(f"{'variant':<17}{'n':>4}  {'C exact':>9} {'torch':>9}  {'C tok_acc':>10} {'torch':>10}  verdict")
    bad = 0
    for r in rows:
        match = [c for c in c_rows if c["task"] == r["task"] and c["encoding"] == r["encoding"]
                 and c["rope_ext"] == r["rope_ext"] and int(c["n"]) == r["n"]
                 and (int(c["seed"]) == r["seed"] or r["seed"] < 0)]
        var = r["encoding"] + ("" if r["rope_ext"] == "none" else "+" + r["rope_ext"])
        if not match:
            print(f"{var:<17}{r['n']:>4}  {'-':>9} {fmt(r['exact_match']):>9}  {'-':>10} "
                  f"{fmt(r['token_acc']):>10}  not in the C report")
            continue
        c = match[0]
        ce, ct = float(c["exact_match"]), float(c["token_acc"])
        e = r["_counts"]
        if e is None:
            ok = math.isnan(ce) and math.isnan(ct)
        else:   # the C CSV prints %g (6 digits): enough to recover the integer counts exactly
            ok = round(ce * e[2]) == e[0] and round(ct * e[3]) == e[1] \
                and abs(ce * e[2] - e[0]) < 1e-3 and abs(ct * e[3] - e[1]) < 1e-2
        bad += not ok
        print(f"{var:<17}{r['n']:>4}  {c['exact_match']:>9} {fmt(r['exact_match']):>9}  {c['token_acc']:>10} "
              f"{fmt(r['token_acc']):>10}  {'identical' if ok else 'DIFFERENT'}")
    return bad


def mean_sd(v):
    v = [x for x in v if not math.isnan(x)]
    if not v:
        return float("nan"), float("nan"), 0
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, sd, len(v)


def compare_stat(rows, c_rows, floor):
    """Training mode: different batches and RNG: compare mean +- sd over seeds. The verdict 'agree' means
    |mean_torch - mean_C| <= 2 * max(sd_C, sd_torch, floor) for exact_match and for token_acc (a rough rule, not a
    test of significance)."""
    print(f"\ncomparison with the C report (independent trainings: mean ± sd over seeds; "
          f"agree if |Δ| <= 2·max(sd_C, sd_torch, {floor:g}) "
          f"for exact_match and token_acc)")
    print(f"{'variant':<17}{'n':>4}  {'C exact_match':>18}  {'torch exact_match':>18}  {'C tok_acc':>9} "
          f"{'torch':>6}  verdict")
    keys = sorted({(r["task"], r["encoding"], r["rope_ext"], r["n"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2] != "none", k[2], k[3]))
    for task, enc, ext, n in keys:
        t = [r for r in rows if (r["task"], r["encoding"], r["rope_ext"], r["n"]) == (task, enc, ext, n)]
        c = [x for x in c_rows if (x["task"], x["encoding"], x["rope_ext"], int(x["n"])) == (task, enc, ext, n)]
        var = enc + ("" if ext == "none" else "+" + ext)
        tm, tsd, tk = mean_sd([r["exact_match"] for r in t])
        tam = mean_sd([r["token_acc"] for r in t])[0]
        if not c:
            print(f"{var:<17}{n:>4}  {'-':>18}  {tm:>7.3f} ± {tsd:.3f} ({tk})  {'-':>9} {tam:>6.3f}  "
                  f"not in the C report")
            continue
        cm, csd, ck = mean_sd([float(x["exact_match"]) for x in c])
        cam = mean_sd([float(x["token_acc"]) for x in c])[0]
        tasd, casd = mean_sd([r["token_acc"] for r in t])[1], mean_sd([float(x["token_acc"]) for x in c])[1]
        if math.isnan(cm) or math.isnan(tm):
            verdict = "n/a"
        else:
            ok = abs(tm - cm) <= 2 * max(csd, tsd, floor) and abs(tam - cam) <= 2 * max(casd, tasd, floor)
            verdict = "agree" if ok else "DIFFER"
        c_steps = sorted({int(x["steps"]) for x in c})
        if c_steps != sorted({r["steps"] for r in t}):
            verdict += f" (C steps {','.join(map(str, c_steps))})"
        print(f"{var:<17}{n:>4}  {cm:>7.3f} ± {csd:.3f} ({ck})  {tm:>7.3f} ± {tsd:.3f} ({tk})  {cam:>9.3f} "
              f"{tam:>6.3f}  {verdict}")


# ------------------------------------------------------------------ main

def parse_list(s, allowed, what):
    items = [i for i in s.split(",")]
    for i in items:
        if i not in allowed:
            sys.exit(f"torch_train_order: {what}: '{i}' is not valid (allowed: {', '.join(allowed)})")
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("mode", choices=("train", "eval"))
    ap.add_argument("--task", default="copy", choices=TASKS, help="train: the task")
    ap.add_argument("--pos", default="rope", help="train: encodings, a comma list of " + ",".join(R.POS_ENCODINGS))
    ap.add_argument("--seeds", default="1", help="train: comma list of seeds (torch RNG)")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--train-len", type=int, default=16, help="train: longest training n")
    ap.add_argument("--test-lens", default="8,16,24,32,48,64")
    ap.add_argument("--rope-ext", default="none", help="none | all | comma list of " + ",".join(EXTS))
    ap.add_argument("--ckpt", help="eval: a C checkpoint (docs/checkpoint.md)")
    ap.add_argument("--data", default=os.path.join(REPO, "data", "eval_sets.h5"))
    ap.add_argument("--chunk", type=int, default=64, help="evaluation batch (xl: at most 16 is used)")
    ap.add_argument("--out", help="write the results here (the C report.csv's columns)")
    ap.add_argument("--save", help="train: torch.save the state_dict to SAVE-<task>-<pos>-seed<seed>.pt")
    ap.add_argument("--compare-csv", help="a C report.csv to compare with")
    ap.add_argument("--spread-floor", type=float, default=0.05, help="train: floor of the sd in the verdict")
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    lens = [int(v) for v in a.test_lens.split(",")]
    exts = list(EXTS) if a.rope_ext == "all" else \
        ([] if a.rope_ext == "none" else parse_list(a.rope_ext, EXTS, "--rope-ext"))
    rows = []
    if a.mode == "eval":
        if not a.ckpt:
            sys.exit("torch_train_order: eval needs --ckpt FILE")
        cfg, state, run, foreign = read_checkpoint(a.ckpt)
        if foreign:
            sys.exit(f"torch_train_order: {a.ckpt}: the reference model has no encoding {foreign!r}")
        with h5py.File(a.ckpt, "r") as f:
            steps = int(f.attrs["step"])
        task, train_len, seed = run["task"], int(run["train_len"]), int(run["seed"])
        model = R.Model(cfg)
        model.load_state_dict(state, strict=True)
        chunk = min(a.chunk, 16) if cfg.pos_encoding == "xl" else a.chunk
        print(f"{a.ckpt}: task {task}, {cfg.pos_encoding}, L_train {train_len}, seed {seed}, step {steps}",
              file=sys.stderr)
        t0 = time.time()
        res = evaluate(model, task, exts, lens, train_len, a.data, chunk)
        rows += result_rows(task, cfg.pos_encoding, seed, steps, float("nan"), time.time() - t0, res)
    else:
        pos_list = parse_list(a.pos, R.POS_ENCODINGS, "--pos")
        seeds = [int(s) for s in a.seeds.split(",")]
        for pos in pos_list:
            for seed in seeds:
                print(f"train {a.task}/{pos}/seed{seed}: {a.steps} steps, batch {a.batch}, lr {a.lr:g}",
                      file=sys.stderr)
                model = make_model(pos, seed)
                loss, train_s = train(model, a.task, seed, a.steps, a.batch, a.train_len, a.lr, a.log_every)
                if a.save:
                    torch.save(model.state_dict(), f"{a.save}-{a.task}-{pos}-seed{seed}.pt")
                chunk = min(a.chunk, 16) if pos == "xl" else a.chunk
                res = evaluate(model, a.task, exts, lens, a.train_len, a.data, chunk)
                rows += result_rows(a.task, pos, seed, a.steps, loss, train_s, res)
    print_table(rows)
    if a.out:
        write_csv(a.out, rows)
        print(f"\nwrote {a.out}")
    if a.compare_csv:
        c_rows = read_csv(a.compare_csv)
        if a.mode == "eval":
            bad = compare_exact(rows, c_rows)
            print(f"\n{'all identical' if bad == 0 else f'{bad} row(s) differ'}")
            return 1 if bad else 0
        compare_stat(rows, c_rows, a.spread_floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
