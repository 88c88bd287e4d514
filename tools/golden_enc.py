#!/usr/bin/python3
"""Golden values for M-RoPE and FIRE (src/nn/pos_mrope.c, src/nn/pos_fire.c), computed in float64 with PyTorch
from the published formulas, written independently of the C code:

  M-RoPE  Qwen2-VL (Wang et al. 2024, sec. 2.1) as Hugging Face's apply_multimodal_rotary_pos_emb computes it:
          cos/sin of each of the three position ids over the whole rotary dim (emb = cat(freqs, freqs)), the doubled
          channel list split by mrope_section * 2 with chunk k taken from axis k % 3, then
          q * cos + rotate_half(q) * sin.  The interleaved-pair variant rotates (2i, 2i+1) by the angle of pair i.
  FIRE    Li et al. 2023 (arXiv:2310.04418), the module of the paper's reference listing: an MLP Linear(1, W), ReLU,
          Linear(W, H) of psi(p_i - p_j) / (psi(max(L, p_i)) + eps), psi(x) = log(|c x| + 1),
          L = |L_multiplier * init_L|; generalized to query positions q and key positions k.
          Gradients of sum(bias * w) for a fixed w by torch.autograd.

Usage: /usr/bin/python3 tools/golden_enc.py [out.h5]     (default: tests/fixtures/enc_golden.h5)
Inputs (x, weights) are drawn in float32 from seeded generators and stored as float32; outputs are float64.
Layout: /mrope/<case>/{x [N, H*hd] f32, pos [3, N] i32, section [3] i32, out [N, H*hd] f64} with attributes
n_heads, head_dim, base, half; /fire/<case>/{q_pos [T], k_pos [S] i32, mlp.0.weight, mlp.0.bias, mlp.2.weight,
mlp.2.bias, c [1], L_multiplier [1] f32, w [H, T, S] f64, bias [H, T, S] f64, grad/<param name> f64} with
attributes n_heads, mlp_width, init_L, eps.
"""
import sys
import zlib

import h5py
import numpy as np
import torch

torch.set_num_threads(1)
BASE_SEED = 20251201
F64 = torch.float64


def gen(name):
    g = torch.Generator()
    g.manual_seed(BASE_SEED + zlib.crc32(name.encode()))
    return g


# ------------------------------------------------------------------ M-RoPE

def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def mrope_cos_sin(pos, section, base, d):
    """cos, sin [N, d] of Qwen2-VL: per-axis angles over the full rotary dim, sections picked per channel."""
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=F64) / d)
    freqs = pos.to(F64)[..., None] * inv_freq               # [3, N, d/2]
    emb = torch.cat([freqs, freqs], dim=-1)                 # [3, N, d]
    split = list(section) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(emb.cos().split(split, dim=-1))], dim=-1)
    sin = torch.cat([m[i % 3] for i, m in enumerate(emb.sin().split(split, dim=-1))], dim=-1)
    return cos, sin


def mrope_half(x, pos, section, base, hd):
    """x [N, H, hd] float64 -> HF apply_multimodal_rotary_pos_emb (q * cos + rotate_half(q) * sin)."""
    cos, sin = mrope_cos_sin(pos, section, base, hd)
    return x * cos[:, None, :] + rotate_half(x) * sin[:, None, :]


def mrope_interleaved(x, pos, section, base, hd):
    """Pairs (2i, 2i+1) rotated by the angle of pair i (of its section's axis)."""
    cos, sin = mrope_cos_sin(pos, section, base, hd)
    c, s = cos[:, None, : hd // 2], sin[:, None, : hd // 2]
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * c - b * s
    out[..., 1::2] = a * s + b * c
    return out


def qwen2vl_positions(offset):
    """Position ids [3, N] as Qwen2-VL's get_rope_index builds them for: 4 text tokens, an image of a 1 x 2 x 3
    (t, h, w) merged grid, 2 text tokens. Text: all three ids equal the running index; vision: start + (t, h, w);
    the text after the image starts at max(previous ids) + 1."""
    ids = [[p, p, p] for p in range(4)]
    start = 4
    for t in range(1):
        for h in range(2):
            for w in range(3):
                ids.append([start + t, start + h, start + w])
    nxt = max(max(r) for r in ids) + 1
    ids += [[nxt + i] * 3 for i in range(2)]
    return torch.tensor(ids, dtype=torch.int64).T.contiguous() + offset


MROPE_CASES = [  # name, n_heads, head_dim, section, base, half, position offset
    ("half_small", 2, 16, (2, 3, 3), 10000.0, True, 0),
    ("interleaved_small", 2, 16, (2, 3, 3), 10000.0, False, 0),
    ("half_far", 2, 16, (3, 1, 4), 10000.0, True, 1000),
    ("qwen2vl_128", 1, 128, (16, 24, 24), 1000000.0, True, 0),
]


def write_mrope(f):
    for name, H, hd, section, base, half, offset in MROPE_CASES:
        g = gen("mrope_" + name)
        pos = qwen2vl_positions(offset)
        N = pos.shape[1]
        x = torch.randn(N, H * hd, generator=g, dtype=torch.float32)
        fn = mrope_half if half else mrope_interleaved
        out = fn(x.to(F64).view(N, H, hd), pos, section, base, hd).reshape(N, H * hd)
        grp = f.create_group("mrope/" + name)
        grp.create_dataset("x", data=x.numpy())
        grp.create_dataset("pos", data=pos.numpy().astype(np.int32))
        grp.create_dataset("section", data=np.array(section, dtype=np.int32))
        grp.create_dataset("out", data=out.numpy())
        grp.attrs.update(n_heads=H, head_dim=hd, base=base, half=int(half))


# ------------------------------------------------------------------ FIRE

class Fire(torch.nn.Module):
    """FIRE as the paper's reference listing defines it, for query positions q [T] and key positions k [S]."""

    def __init__(self, n_heads, mlp_width, init_c, init_L, eps):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(1, mlp_width), torch.nn.ReLU(),
                                       torch.nn.Linear(mlp_width, n_heads))
        self.c = torch.nn.Parameter(torch.tensor(init_c))
        self.init_L = torch.nn.Parameter(torch.tensor(init_L), requires_grad=False)
        self.L_multiplier = torch.nn.Parameter(torch.tensor(1.0))
        self.eps = eps

    def forward(self, q, k):
        q = q.to(self.c.dtype)
        k = k.to(self.c.dtype)
        rel = q[:, None] - k[None, :]
        L = torch.abs(self.L_multiplier * self.init_L)
        norm = torch.max(q, L)[:, None]
        rel = torch.log(torch.abs(self.c * rel) + 1)
        norm = torch.log(torch.abs(self.c * norm) + 1) + self.eps
        return self.mlp((rel / norm).unsqueeze(-1)).permute(2, 0, 1)   # [H, T, S]


FIRE_CASES = [  # name, n_heads, q positions, k positions, init_L, c, L_multiplier
    # rows 0..5 below L = 6.5, rows 6..11 above it
    ("dense_threshold", 3, list(range(12)), list(range(12)), 8.0, 0.3, 0.8125),
    # everything below the default L = 512 (one normalizer)
    ("dense_default", 4, list(range(10)), list(range(10)), 512.0, 0.1, 1.0),
    # queries at the end of the keys (a KV cache) past L = 512
    ("cache_far", 2, [1009, 1010, 1011], list(range(1000, 1012)), 512.0, 0.1, 1.0),
    # sparse positions across L, and keys after some queries (masked in causal attention, finite here)
    ("sparse", 2, [3, 40, 41, 97, 300], [0, 3, 17, 40, 41, 97, 200], 32.0, 0.05, 1.5),
    # far past any training length
    ("huge", 2, [100000, 100003, 100007], [0, 50000, 99999, 100000, 100003], 512.0, 0.1, 1.0),
]
PARAM_NAMES = ["mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias", "c", "L_multiplier"]


def write_fire(f):
    W, eps = 32, 1e-6
    for name, H, qp, kp, init_L, c, Lm in FIRE_CASES:
        g = gen("fire_" + name)
        m = Fire(H, W, c, init_L, eps)
        with torch.no_grad():  # weights drawn in float32 (torch.nn.Linear's default ranges), then c and L_multiplier
            for p, bound in ((m.mlp[0].weight, 1.0), (m.mlp[0].bias, 1.0),
                             (m.mlp[2].weight, W ** -0.5), (m.mlp[2].bias, W ** -0.5)):
                p.copy_((torch.rand(p.shape, generator=g, dtype=torch.float32) * 2 - 1) * bound)
            m.c.fill_(c)
            m.L_multiplier.fill_(Lm)
        m32 = {n: t.detach().clone() for n, t in m.named_parameters()}
        m = m.double()
        q = torch.tensor(qp, dtype=torch.int64)
        k = torch.tensor(kp, dtype=torch.int64)
        bias = m(q, k)
        w = torch.randn(bias.shape, generator=g, dtype=F64)
        (bias * w).sum().backward()
        grp = f.create_group("fire/" + name)
        grp.create_dataset("q_pos", data=np.array(qp, dtype=np.int32))
        grp.create_dataset("k_pos", data=np.array(kp, dtype=np.int32))
        params = dict(m.named_parameters())
        for pn in PARAM_NAMES:
            grp.create_dataset(pn, data=m32[pn].numpy().astype(np.float32).reshape(-1 if pn in ("c", "L_multiplier")
                                                                                    else m32[pn].shape))
            grp.create_dataset("grad/" + pn, data=params[pn].grad.numpy().reshape(-1 if params[pn].dim() == 0
                                                                                  else params[pn].shape))
        grp.create_dataset("w", data=w.numpy())
        grp.create_dataset("bias", data=bias.detach().numpy())
        grp.attrs.update(n_heads=H, mlp_width=W, init_L=init_L, eps=eps)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/enc_golden.h5"
    tmp = out + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["generator"] = "tools/golden_enc.py"
        write_mrope(f)
        write_fire(f)
    import os
    os.replace(tmp, out)
    print("wrote", out)


if __name__ == "__main__":
    main()
