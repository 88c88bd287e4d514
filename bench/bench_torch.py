#!/usr/bin/python3
"""PyTorch side of the ropegrad training-step benchmark (bench/README.md; run by bench/run.sh).

Times the same training step as bench/bench.c with tools/ref_model.py's Model, on the same shapes:
    opt.zero_grad(set_to_none=True); loss = lm_loss(model(tokens), targets); loss.backward();
    clip_grad_norm_(params, 1.0); lr = lr_schedule(step, 1e-3, 100, 1000, 0.1); opt.step(); loss.item()
with torch.optim.AdamW(betas=(0.9, 0.98), eps=1e-8, weight decay 0.01 on 2-D parameters only, foreach=False as
in tools/ref_model.py train_steps; on CPU tensors foreach=False is also torch 1.13's default).

Threads are matched at n = 1 and 2: torch.set_num_threads(n) (PyTorch's own intra-op OpenMP pool) and
openblas_set_num_threads(n) (the OpenBLAS that torch reaches through libblas.so.3; Debian's libblas.so.3 is a thin
wrapper over libopenblas.so.0, so both are the same library, whose core name is reported).

Kernels (reported in the TSV's header): torch's fp32 products run on that OpenBLAS (Debian's torch is built with
BLAS_INFO=generic, the system libblas.so.3), with the kernel set OPENBLAS_CORETYPE names (bench/run.sh sets it to
the CPU's own set in its second pass, where PyTorch is at its best); its autocast bf16 products run on the oneDNN
(MKL-DNN) it is built with where the CPU has AVX-512 (a subprocess runs one autocast Linear with DNNL_VERBOSE=1 and
the implementation oneDNN names is reported); its elementwise kernels are those of "CPU capability usage" in
torch.__config__.show().

Batches: fixed-length copy-task samples (BOS x SEP x EOS, targets -100 outside positions n+1..2n+1), T = 2n+2
input tokens, a pre-generated set of 8 batches cycled (built outside the timed region).

Writes a TSV (see read_torch in bench/report.c): "# key value" lines, a header, then one row per
(model, pos, threads, precision): model pos threads steps ms_median ms_min precision (fp32, or bf16:
torch.autocast("cpu", dtype=torch.bfloat16) around the forward and the loss, as bench/README.md says).
If torch cannot be imported it prints a message and exits 0 without writing anything.
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

try:
    import torch
except ImportError as e:  # python3-torch is optional
    print(f"bench_torch: PyTorch not available ({e}); skipped (install Debian's python3-torch)")
    sys.exit(0)

import ref_model as R  # noqa: E402  (needs torch)

# name: (d_model, n_heads, n_layers, d_ff, batch, n) -- the same table as MODELS in bench/bench.c
MODELS = {
    "ref": (64, 4, 2, 256, 64, 16),
    "large": (256, 8, 4, 1024, 16, 64),
}
POS = ("rope", "t5")


def openblas():
    """The process's OpenBLAS (the one torch uses through libblas.so.3), or None."""
    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_set_num_threads.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None


def config_line(prefix):
    """The value after `prefix` in torch.__config__.show(), or "?"."""
    for line in torch.__config__.show().splitlines():
        line = line.strip().lstrip("- ")
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return "?"


def build_setting(name):
    """A "Build settings" value of torch.__config__.show() (BLAS_INFO, USE_MKLDNN), or "?"."""
    for part in config_line("Build settings:").split(","):
        k, _, v = part.strip().partition("=")
        if k == name:
            return v
    return "?"


def bf16_kernel():
    """What runs an autocast bf16 Linear here: oneDNN's primitive and implementation as DNNL_VERBOSE names them."""
    code = ("import torch\nl = torch.nn.Linear(64, 64)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    l(torch.randn(64, 64))\n")
    env = dict(os.environ, DNNL_VERBOSE="1", ONEDNN_VERBOSE="1")
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    version = next((ln.split(",")[-1].strip() for ln in out.splitlines() if ",info,oneDNN" in ln), "oneDNN")
    for ln in out.splitlines():
        f = ln.split(",")
        if len(f) > 4 and f[1] == "exec" and f[2] == "cpu":
            return f"{version.split(' (')[0]} {f[3]} {f[4]}"
    return "ATen's own bf16 loops (oneDNN ran no bf16 primitive)"


def make_batches(batch, n, count, gen):
    """count fixed-length copy-task batches: tokens [B, 2n+2], targets [B, 2n+2] with -100 where no loss."""
    out = []
    for _ in range(count):
        x = torch.randint(4, 30, (batch, n), generator=gen)
        bos = torch.full((batch, 1), 1)
        sep = torch.full((batch, 1), 2)
        eos = torch.full((batch, 1), 3)
        seq = torch.cat([bos, x, sep, x, eos], dim=1)          # [B, 2n+3]
        tokens = seq[:, :-1].contiguous()
        targets = torch.full_like(tokens, R.IGNORE_INDEX)
        targets[:, n + 1:] = seq[:, n + 2:]                   # positions n+1 .. 2n+1 predict y_1..y_n, EOS
        out.append((tokens, targets))
    return out


def run_row(model_name, pos, threads, plan, blas, prec="fp32"):
    d, h, L, f, B, n = MODELS[model_name]
    torch.set_num_threads(threads)
    if blas is not None:
        blas.openblas_set_num_threads(threads)
    torch.manual_seed(1)
    cfg = R.Config(d_model=d, n_heads=h, n_layers=L, d_ff=f, pos_encoding=pos)
    model = R.Model(cfg)
    opt = torch.optim.AdamW(R.decay_param_groups(model, 0.01), lr=1e-3, betas=(0.9, 0.98), eps=1e-8,
                            foreach=False)
    gen = torch.Generator().manual_seed(1)
    batches = make_batches(B, n, 8, gen)
    step = 0

    def train_step():
        nonlocal step
        tokens, targets = batches[step % len(batches)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if prec == "bf16":  # autocast: bf16 linear products (CPU autocast's lower_precision list), fp32 master weights
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = R.lm_loss(model(tokens), targets)
        else:
            loss = R.lm_loss(model(tokens), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        lr = R.lr_schedule(step, 1e-3, 100, 1000, 0.1)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.step()
        loss.item()
        step += 1
        return time.perf_counter() - t0

    warm_steps, warm_s, min_steps, target_steps, target_s = plan
    t_start = time.perf_counter()
    i = 0
    while i < warm_steps and (i < 2 or time.perf_counter() - t_start < warm_s):
        train_step()
        i += 1
    times = []
    while True:
        times.append(train_step())
        if len(times) >= min_steps and (len(times) >= target_steps or sum(times) >= target_s):
            break
    return len(times), 1e3 * statistics.median(times), 1e3 * min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="TSV to write")
    ap.add_argument("--quick", action="store_true", help="a short run (as bench --quick)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default="ref,large")
    ap.add_argument("--pos", default="rope,t5")
    ap.add_argument("--precision", default="fp32,bf16", help="fp32, bf16 (torch.autocast cpu bfloat16), or both")
    a = ap.parse_args()
    # the same plan as bench/bench.c: warm-up steps, warm-up s, min timed steps, target steps, target s
    plan = (3, 0.5, 3, 10, 0.5) if a.quick else (10, 2.0, 3, 30, 3.0)
    blas = openblas()
    core = blas.openblas_get_corename().decode() if blas is not None else "?"
    rows = []
    for m in a.models.split(","):
        if m not in MODELS:  # "exp" (train_order's own step) is a C-only row
            continue
        for pos in a.pos.split(","):
            for prec in a.precision.split(","):
                for thr in (int(t) for t in a.threads.split(",")):
                    print(f"bench_torch: {m}/{pos} {prec}, {thr} thread(s)...", file=sys.stderr, flush=True)
                    steps, med, mn = run_row(m, pos, thr, plan, blas, prec)
                    rows.append((m, pos, thr, steps, med, mn, prec))
    tmp = a.out + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(f"# torch {torch.__version__}\n")
        fh.write(f"# openblas_core {core}\n")
        fh.write(f"# OPENBLAS_CORETYPE {os.environ.get('OPENBLAS_CORETYPE', '(unset)')}\n")
        fh.write("# optimizer torch.optim.AdamW foreach=False\n")
        fh.write(f"# blas OpenBLAS via libblas.so.3 (BLAS_INFO={build_setting('BLAS_INFO')})\n")
        fh.write(f"# bf16_kernel {bf16_kernel()}\n")
        fh.write(f"# cpu_capability {config_line('CPU capability usage:')}\n")
        fh.write("model\tpos\tthreads\tsteps\tms_median\tms_min\tprecision\n")
        for r in rows:
            fh.write("%s\t%s\t%d\t%d\t%.4f\t%.4f\t%s\n" % r)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
