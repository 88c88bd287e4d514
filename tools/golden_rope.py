#!/usr/bin/python3
"""Golden values of the HF-style RoPE scaling (issue 15, section 1), computed from the published formulas in plain
float64 Python (no ropegrad code, no torch): Hugging Face transformers, modeling_rope_utils.py
(_compute_dynamic_ntk_parameters, _compute_yarn_parameters, _compute_llama3_parameters, partial_rotary_factor).

Usage: /usr/bin/python3 tools/golden_rope.py [outdir]      (default: tests/fixtures; also run by `make fixtures`)
Writes outdir/rope_scaling_golden.h5 (read by tests/nn/pos/test_pos.c):
  /dynamic_base           [n]  base' at the sequence lengths /dynamic_seq_len (attrs d, base, factor, original)
  /dynamic_inv_freq_32    [d/2] the frequencies at length 32
  /yarn_inv_freq          [d/2] yarn with explicit betas and attention_factor (attrs d, base, factor, original,
                          beta_fast, beta_slow, attention_factor)
  /llama3_inv_freq        [d/2] llama3 with non-default low/high_freq_factor (attrs ...)
  /partial_inv_freq       frequencies of head_dim 16 with partial_rotary_factor 0.5 (attrs head_dim, factor, base)
  /dynamic_rotated        x [8] rotated (interleaved pairs) at position 40 with dynamic NTK at length 41
"""
import math
import os
import sys

import h5py
import numpy as np


def default_inv_freq(d, base):
    return [1.0 / base ** (2 * i / d) for i in range(d // 2)]


def dynamic_base(d, base, factor, original, seq_len):
    # HF: seq_len = max(seq_len, max_position_embeddings); base * ((factor * seq_len / mpe) - (factor - 1)) ** (d / (d - 2))
    n = seq_len if seq_len > original else original
    return base * ((factor * n / original) - (factor - 1)) ** (d / (d - 2))


def yarn_inv_freq(d, base, factor, original, beta_fast, beta_slow):
    def correction_dim(rot):
        return (d * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))
    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(d // 2):
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        pos_freq = base ** (2 * i / d)
        extrap = 1.0 - ramp  # the extrapolation weight
        out.append((1.0 / (factor * pos_freq)) * (1.0 - extrap) + (1.0 / pos_freq) * extrap)
    return out


def llama3_inv_freq(d, base, factor, original, low_ff, high_ff):
    low_wl, high_wl = original / low_ff, original / high_ff
    out = []
    for f in default_inv_freq(d, base):
        wl = 2 * math.pi / f
        fl = f / factor if wl > low_wl else f
        smooth = (original / wl - low_ff) / (high_ff - low_ff)
        medium = not (wl < high_wl) and not (wl > low_wl)
        out.append((1 - smooth) * fl / factor + smooth * fl if medium else fl)
    return out


def write(outdir):
    path = os.path.join(outdir, "rope_scaling_golden.h5")
    with h5py.File(path, "w") as f:
        d, base, factor, original = 8, 1e4, 2.0, 16
        lens = [1, 4, 16, 17, 32, 100, 1000]
        ds = f.create_dataset("dynamic_base", data=np.array([dynamic_base(d, base, factor, original, n) for n in lens]))
        f.create_dataset("dynamic_seq_len", data=np.array(lens, dtype=np.int32))
        for k, v in (("d", d), ("base", base), ("factor", factor), ("original", original)):
            ds.attrs[k] = v
        f.create_dataset("dynamic_inv_freq_32", data=np.array(default_inv_freq(d, dynamic_base(d, base, factor,
                                                                                                original, 32))))
        # a rotation at position 40 with the base of length 41
        x = [0.5, -1.25, 2.0, 0.75, -0.3, 1.1, 0.9, -2.2]
        inv = default_inv_freq(d, dynamic_base(d, base, factor, original, 41))
        rot = []
        for i in range(d // 2):
            a = 40 * inv[i]
            rot += [x[2 * i] * math.cos(a) - x[2 * i + 1] * math.sin(a), x[2 * i] * math.sin(a) + x[2 * i + 1] * math.cos(a)]
        f.create_dataset("dynamic_x", data=np.array(x))
        f.create_dataset("dynamic_rotated", data=np.array(rot))

        yd, ybase, yfac, yorig, bf, bs, af = 16, 1e4, 4.0, 32, 16.0, 2.0, 1.25
        ds = f.create_dataset("yarn_inv_freq", data=np.array(yarn_inv_freq(yd, ybase, yfac, yorig, bf, bs)))
        for k, v in (("d", yd), ("base", ybase), ("factor", yfac), ("original", yorig), ("beta_fast", bf),
                     ("beta_slow", bs), ("attention_factor", af)):
            ds.attrs[k] = v

        ld, lbase, lfac, lorig, lo, hi = 16, 5e5, 8.0, 64, 2.0, 8.0
        ds = f.create_dataset("llama3_inv_freq", data=np.array(llama3_inv_freq(ld, lbase, lfac, lorig, lo, hi)))
        for k, v in (("d", ld), ("base", lbase), ("factor", lfac), ("original", lorig), ("low_freq_factor", lo),
                     ("high_freq_factor", hi)):
            ds.attrs[k] = v

        hd, prf, pbase = 16, 0.5, 1e4
        ds = f.create_dataset("partial_inv_freq", data=np.array(default_inv_freq(int(hd * prf), pbase)))
        for k, v in (("head_dim", hd), ("partial_rotary_factor", prf), ("base", pbase)):
            ds.attrs[k] = v
    print(f"wrote {path}; dynamic base' at length 32: {dynamic_base(8, 1e4, 2.0, 16, 32):.6f}")


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures")
