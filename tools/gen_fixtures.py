#!/usr/bin/python3
"""Writes the HDF5 fixtures the C tests compare against.

Usage: /usr/bin/python3 tools/gen_fixtures.py [outdir]      (default: tests/fixtures)

Deterministic: every fixture seeds its own torch.Generator from a fixed base seed
and a CRC of its name.  Parameters are drawn in float32, stored as float32, and the
reference computation (forward, loss, gradients, AdamW) runs in float64 starting
from exactly those float32 values.  See tests/fixtures/README.md for the layout.
"""
import math
import os
import sys
import zlib

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_model as R  # noqa: E402
import golden_rope  # noqa: E402
import ref_grid_rot  # noqa: E402
import ref_grid_bias as RG  # noqa: E402

torch.set_num_threads(1)
BASE_SEED = 20240601

SMALL = dict(vocab_size=30, d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=24)
B, T = 3, 10
ADAMW = dict(lr=1e-2, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01, clip=0.05,
             warmup=2, total_steps=5, min_lr_frac=0.1)


def gen(name):
    g = torch.Generator()
    g.manual_seed(BASE_SEED + zlib.crc32(name.encode()))
    return g


def normal(g, shape, std, mean=0.0):
    return (torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean).to(torch.float32)


def init_param(name, shape, g):
    """float32 draw; magnitudes chosen so logits are O(1)."""
    if len(shape) == 1 and ("ln" in name.split(".")[-2]) and name.endswith(".weight"):
        return normal(g, shape, 0.1, 1.0)          # LayerNorm gains
    if name.endswith(".bias") and len(shape) == 1:
        return normal(g, shape, 0.1)
    if name == "rel_bias.weight":
        return normal(g, shape, 0.5)
    if ".fire." in name:   # FIRE: c near 0.4, L_multiplier near 1 (L near init_L), first layer weights O(1)
        if name.endswith(".c"):   # 0-d: one draw
            return normal(g, (1,), 0.05, 0.4).reshape(shape)
        if name.endswith(".L_multiplier"):
            return normal(g, (1,), 0.05, 1.0).reshape(shape)
        if name.endswith("mlp.0.weight"):
            return normal(g, shape, 1.0)
    if ".kerple." in name:   # KERPLE: r1, r2 near 0.8; in layer 0 one r1 below eps and one r2 above 2 (clamped)
        v = normal(g, shape, 0.3, 0.8)
        if name == "blocks.0.attn.kerple.r1":
            v[0] = -0.2
        if name == "blocks.0.attn.kerple.r2":
            v[1] = 2.5
        return v
    return normal(g, shape, 0.3)


def init_module(module, g):
    """Returns {name: float32 tensor} and loads them (cast) into the module."""
    p32 = {}
    with torch.no_grad():
        for name, p in module.named_parameters():
            v = init_param(name, tuple(p.shape), g)
            p32[name] = v
            p.copy_(v.to(p.dtype))
    return p32


def make_batch(g, cfg, lengths):
    tokens = torch.zeros(B, T, dtype=torch.long)
    targets = torch.full((B, T), R.IGNORE_INDEX, dtype=torch.long)
    for b, L in enumerate(lengths):
        tokens[b, :L] = torch.randint(1, cfg.vocab_size, (L,), generator=g)
        targets[b, : L - 1] = tokens[b, 1:L]
        # one extra ignored target inside the sequence
        k = int(torch.randint(0, L - 1, (1,), generator=g))
        targets[b, k] = R.IGNORE_INDEX
    return tokens, targets


def random_positions(g, max_len):
    rows = []
    for _ in range(B):
        perm = torch.randperm(max_len, generator=g)[:T]
        rows.append(torch.sort(perm).values)
    return torch.stack(rows).to(torch.long)


def write_attrs(f, cfg):
    for k, v in cfg.as_dict().items():
        if isinstance(v, str):
            f.attrs[k] = np.string_(v)
        elif isinstance(v, bool):
            f.attrs[k] = np.int32(v)
        elif isinstance(v, int):
            f.attrs[k] = np.int32(v)
        else:
            f.attrs[k] = np.float64(v)


def f64(t):
    return t.detach().to(torch.float64).contiguous().numpy()


def model_fixture(outdir, fname, cfg_kw, positions=False, adamw=False, lengths=(7, 10, 4)):
    cfg = R.Config(**SMALL, **cfg_kw)
    g = gen(fname)
    model = R.Model(cfg).double()
    p32 = init_module(model, g)
    tokens, targets = make_batch(g, cfg, lengths)
    pos = random_positions(g, cfg.max_len) if positions else None

    logits = model(tokens, pos)
    loss = R.lm_loss(logits, targets)
    model.zero_grad()
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    assert all(torch.isfinite(v).all() for v in grads.values())
    assert logits.abs().max() < 20, "logits not O(1)"

    path = os.path.join(outdir, fname)
    with h5py.File(path, "w") as f:
        write_attrs(f, cfg)
        for n, v in p32.items():   # 0-d parameters (FIRE's c, L_multiplier) are stored [1], as ropegrad has them
            f.create_dataset(f"params/{n}", data=np.atleast_1d(v.numpy().astype(np.float32)))
        f.create_dataset("input/tokens", data=tokens.numpy().astype(np.int32))
        f.create_dataset("input/targets", data=targets.numpy().astype(np.int32))
        if pos is not None:
            f.create_dataset("input/positions", data=pos.numpy().astype(np.int32))
        f.create_dataset("expected/logits", data=f64(logits))
        f.create_dataset("expected/loss", data=np.array([loss.item()], dtype=np.float64))
        for n, v in grads.items():
            f.create_dataset(f"expected/grads/{n}", data=np.atleast_1d(f64(v)))
        if adamw:
            # fresh model from the same float32 params
            m2 = R.Model(cfg).double()
            with torch.no_grad():
                for n, p in m2.named_parameters():
                    p.copy_(p32[n].to(torch.float64))
            losses, norms = R.train_steps(m2, tokens, targets, pos, **ADAMW)
            assert abs(losses[0] - loss.item()) < 1e-12
            assert all(nm > ADAMW["clip"] for nm in norms), ("clip not active", norms)
            # independent hand-written AdamW must agree with torch.optim.AdamW
            manual = manual_adamw(cfg, p32, tokens, targets, pos)
            for n, p in m2.named_parameters():
                assert torch.allclose(p, manual[0][n], rtol=0, atol=1e-12), n
            assert np.allclose(losses, manual[1], rtol=0, atol=1e-12)
            assert np.allclose(norms, manual[2], rtol=0, atol=1e-12)
            a = f.create_group("adamw")
            a.attrs["lr"] = ADAMW["lr"]
            a.attrs["beta1"], a.attrs["beta2"] = ADAMW["betas"]
            for k in ("eps", "weight_decay", "clip", "min_lr_frac"):
                a.attrs[k] = np.float64(ADAMW[k])
            a.attrs["warmup"] = np.int32(ADAMW["warmup"])
            a.attrs["total_steps"] = np.int32(ADAMW["total_steps"])
            a.create_dataset("losses", data=np.array(losses, dtype=np.float64))
            a.create_dataset("grad_norms", data=np.array(norms, dtype=np.float64))
            for n, p in m2.named_parameters():
                a.create_dataset(f"params/{n}", data=f64(p))
    extra = f" adamw losses {[round(x, 4) for x in losses]}" if adamw else ""
    print(f"wrote {path}: loss {loss.item():.6f}{extra}")


def manual_adamw(cfg, p32, tokens, targets, pos):
    """Hand-written AdamW + clipping + schedule (cross-check of torch.optim.AdamW)."""
    m = R.Model(cfg).double()
    with torch.no_grad():
        for n, p in m.named_parameters():
            p.copy_(p32[n].to(torch.float64))
    A = ADAMW
    b1, b2 = A["betas"]
    state = {n: (torch.zeros_like(p), torch.zeros_like(p)) for n, p in m.named_parameters()}
    losses, norms = [], []
    for s in range(A["total_steps"]):
        m.zero_grad(set_to_none=True)
        loss = R.lm_loss(m(tokens, pos), targets)
        loss.backward()
        gn = math.sqrt(sum(float((p.grad ** 2).sum()) for p in m.parameters()))
        coef = min(1.0, A["clip"] / (gn + 1e-6))      # torch clip_grad_norm_ formula
        lr = R.lr_schedule(s, A["lr"], A["warmup"], A["total_steps"], A["min_lr_frac"])
        t = s + 1
        with torch.no_grad():
            for n, p in m.named_parameters():
                gr = p.grad * coef
                wd = A["weight_decay"] if p.dim() == 2 else 0.0
                p.mul_(1 - lr * wd)
                mm, vv = state[n]
                mm.mul_(b1).add_(gr * (1 - b1))
                vv.mul_(b2).add_(gr * gr * (1 - b2))
                denom = (vv / (1 - b2 ** t)).sqrt() + A["eps"]
                p.sub_(lr * (mm / (1 - b1 ** t)) / denom)
        losses.append(loss.item())
        norms.append(gn)
    return {n: p.detach() for n, p in m.named_parameters()}, losses, norms


def attn_fixture(outdir):
    path = os.path.join(outdir, "attn.h5")
    d, H, Bb, Tt, S = 16, 2, 2, 5, 7
    with h5py.File(path, "w") as f:
        f.attrs["d_model"] = np.int32(d)
        f.attrs["n_heads"] = np.int32(H)
        for grp, causal, cross in (("self_causal", True, False), ("self_bidir", False, False),
                                   ("cross", False, True)):
            g = gen("attn/" + grp)
            att = R.Attention(d, H).double()
            p32 = init_module(att, g)
            x32 = normal(g, (Bb, Tt, d), 1.0)
            m32 = normal(g, (Bb, S, d), 1.0) if cross else None
            w32 = normal(g, (Bb, Tt, d), 1.0)
            x = x32.to(torch.float64).requires_grad_(True)
            m = m32.to(torch.float64).requires_grad_(True) if cross else None
            out = att(x, mem=m, causal=causal)
            (out * w32.to(torch.float64)).sum().backward()
            G = f.create_group(grp)
            G.attrs["causal"] = np.int32(causal)
            for n, v in p32.items():
                G.create_dataset(n, data=v.numpy())
            G.create_dataset("x", data=x32.numpy())
            if cross:
                G.create_dataset("m", data=m32.numpy())
            G.create_dataset("wout", data=w32.numpy())
            G.create_dataset("out", data=f64(out))
            G.create_dataset("grad_x", data=f64(x.grad))
            if cross:
                G.create_dataset("grad_m", data=f64(m.grad))
            for n, p in att.named_parameters():
                G.create_dataset("grad_" + n, data=f64(p.grad))
    print(f"wrote {path}")


# ---------------------------------------------------------------------------
# Golden values computed with plain scalar Python (math module), independent of
# the tensor code in ref_model; they are cross-checked against ref_model here.
# ---------------------------------------------------------------------------
def scalar_t5_bucket(rel, bidirectional, num_buckets=32, max_distance=128):
    """Scalar re-implementation; the log term is evaluated in float32 like HF's torch.log(float())."""
    out = 0
    if bidirectional:
        num_buckets //= 2
        if rel > 0:
            out += num_buckets
        n = abs(rel)
    else:
        n = max(-rel, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return out + n
    l32 = np.float32(np.log(np.float32(np.float32(n) / np.float32(max_exact))))
    v = np.float32(l32 / np.float32(math.log(max_distance / max_exact)) * np.float32(num_buckets - max_exact))
    return out + min(max_exact + int(v), num_buckets - 1)


def scalar_t5_bucket_f64(rel, bidirectional, num_buckets=32, max_distance=128):
    out = 0
    if bidirectional:
        num_buckets //= 2
        out += num_buckets if rel > 0 else 0
        n = abs(rel)
    else:
        n = max(-rel, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return out + n
    v = math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    return out + min(max_exact + int(v), num_buckets - 1)


def scalar_rope(x, p, base, half):
    d = len(x)
    y = list(x)
    for i in range(d // 2):
        a = p * base ** (-2.0 * i / d)
        ia, ib = (i, i + d // 2) if half else (2 * i, 2 * i + 1)
        y[ia] = x[ia] * math.cos(a) - x[ib] * math.sin(a)
        y[ib] = x[ia] * math.sin(a) + x[ib] * math.cos(a)
    return y


def scalar_yarn(d, base, s, L):
    fcd = lambda r: d * math.log(L / (r * 2 * math.pi)) / (2 * math.log(base))  # noqa: E731
    lo, hi = max(math.floor(fcd(32)), 0), min(math.ceil(fcd(1)), d - 1)
    if lo == hi:
        hi += 0.001
    out = []
    for i in range(d // 2):
        pf = base ** (2 * i / d)
        ramp = min(max((i - lo) / (hi - lo), 0.0), 1.0)
        ex = 1.0 - ramp
        out.append((1 / (s * pf)) * (1 - ex) + (1 / pf) * ex)
    return out, 0.1 * math.log(s) + 1.0


def scalar_llama3(d, base, s, L, lf=1.0, hf=4.0):
    out = []
    for i in range(d // 2):
        f = base ** (-2 * i / d)
        wl = 2 * math.pi / f
        if wl < L / hf:
            out.append(f)
        elif wl > L / lf:
            out.append(f / s)
        else:
            sm = (L / wl - lf) / (hf - lf)
            out.append((1 - sm) * f / s + sm * f)
    return out


def golden_fixture(outdir):
    path = os.path.join(outdir, "pos_golden.h5")
    g = gen("pos_golden")
    with h5py.File(path, "w") as f:
        # ALiBi
        expect = {4: [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8],
                  8: [2 ** -(k + 1) for k in range(8)]}
        expect[6] = expect[4] + [2 ** -1, 2 ** -3]
        expect[12] = expect[8] + [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5]
        for n in (4, 6, 8, 12):
            s = R.alibi_slopes(n)
            assert np.allclose(s, expect[n], rtol=1e-15, atol=0), (n, s)
            f.create_dataset(f"alibi_slopes_{n}", data=np.array(s, dtype=np.float64))
        # T5 buckets
        rel = list(range(-200, 201))
        for mode, bid in (("causal", False), ("bidir", True)):
            sc = [scalar_t5_bucket(r, bid) for r in rel]
            sc64 = [scalar_t5_bucket_f64(r, bid) for r in rel]
            tb = R.t5_relative_position_bucket(torch.tensor(rel), bidirectional=bid).tolist()
            assert sc == tb, mode
            diff = [r for r, a, b in zip(rel, sc, sc64) if a != b]
            if diff:
                print(f"  note: t5 {mode}: float32 vs float64 log differ at rel={diff}")
            d = f.create_dataset(f"t5_buckets_{mode}", data=np.array(tb, dtype=np.int32))
            d.attrs["rel_first"] = np.int32(-200)
            d.attrs["num_buckets"], d.attrs["max_distance"] = np.int32(32), np.int32(128)
        # hand computations (causal): n = i - j
        hand_c = {0: 0, -1: 1, -15: 15, -16: 16, -20: 17, -32: 21, -64: 26, -127: 31, -128: 31,
                  -200: 31, 5: 0}
        hand_b = {0: 0, -3: 3, 3: 19, -8: 8, -9: 8, 8: 24, -32: 12, -127: 15, 200: 31}
        for r, v in hand_c.items():
            assert tb_lookup(f, "causal", r) == v, ("causal", r, tb_lookup(f, "causal", r), v)
        for r, v in hand_b.items():
            assert tb_lookup(f, "bidir", r) == v, ("bidir", r, tb_lookup(f, "bidir", r), v)
        # sinusoidal
        pos = [0, 1, 7, 100]
        sc = [[(math.sin if c % 2 == 0 else math.cos)(p / 10000 ** ((c - c % 2) / 16)) for c in range(16)]
              for p in pos]
        tab = R.sinusoidal_table(torch.tensor(pos), 16)
        assert np.allclose(tab.numpy(), sc, rtol=0, atol=1e-13)
        ds = f.create_dataset("sinusoidal", data=tab.numpy())
        ds.attrs["positions"] = np.array(pos, dtype=np.int32)
        ds.attrs["d_model"] = np.int32(16)
        # RoPE single vector, d=8, position 5
        x = torch.randn(8, generator=g, dtype=torch.float64)
        f.create_dataset("rope_x", data=x.numpy())
        for name, half in (("rope_interleaved", False), ("rope_half", True)):
            cfg = R.Config(d_model=8, n_heads=1, pos_encoding="rope-half" if half else "rope")
            cos, sin = R.rope_cos_sin(torch.tensor([[5]]), cfg)
            y = R.apply_rope(x.view(1, 1, 1, 8), cos, sin, 8, half).view(8)
            ys = scalar_rope(x.tolist(), 5, 10000.0, half)
            assert np.allclose(y.numpy(), ys, rtol=0, atol=1e-14)
            ds = f.create_dataset(name, data=y.numpy())
            ds.attrs["position"], ds.attrs["base"] = np.int32(5), np.float64(10000.0)
        # YaRN / Llama3 / NTK, head_dim 16, s 4, L_orig 32
        hd, base, s, L = 16, 10000.0, 4.0, 32
        inv, af = R.yarn_params(hd, base, s, L)
        ys, afs = scalar_yarn(hd, base, s, L)
        assert np.allclose(inv.numpy(), ys, rtol=1e-14) and abs(af - afs) < 1e-15
        ll = R.llama3_inv_freq(hd, base, s, L)
        assert np.allclose(ll.numpy(), scalar_llama3(hd, base, s, L), rtol=1e-14)
        nb = R.ntk_base(base, s, hd)
        assert abs(nb - base * 4.0 ** (16 / 14)) < 1e-9
        for name, data in (("yarn_inv_freq", inv.numpy()), ("llama3_inv_freq", ll.numpy()),
                           ("yarn_attention_factor", np.array([af])), ("ntk_base", np.array([nb]))):
            ds = f.create_dataset(name, data=np.asarray(data, dtype=np.float64))
            ds.attrs["head_dim"], ds.attrs["base"] = np.int32(hd), np.float64(base)
            ds.attrs["scale"], ds.attrs["orig_len"] = np.float64(s), np.int32(L)
        f.attrs["head_dim"], f.attrs["rope_base"] = np.int32(hd), np.float64(base)
        f.attrs["rope_scale"], f.attrs["rope_orig_len"] = np.float64(s), np.int32(L)
    print(f"wrote {path}")


def tb_lookup(f, mode, r):
    return int(f[f"t5_buckets_{mode}"][r + 200])


def self_checks():
    g = gen("self_checks")
    for pe, rd in (("rope", 0), ("rope-half", 0), ("rope-half", 4), ("rope", 4)):
        for ext in R.ROPE_EXTS:
            cfg = R.Config(d_model=16, n_heads=2, pos_encoding=pe, rotary_dim=rd, rope_ext=ext,
                           rope_scale=2.0, rope_orig_len=6)
            hd = cfg.head_dim
            _, _, af = R.rope_params(cfg)
            q = torch.randn(1, 1, 1, hd, generator=g, dtype=torch.float64)
            k = torch.randn(1, 1, 1, hd, generator=g, dtype=torch.float64)

            def rot(x, p):
                c, s = R.rope_cos_sin(torch.tensor([[p]]), cfg)
                return R.apply_rope(x, c, s, cfg.rotary_dim, pe == "rope-half")
            # norm preservation (up to the yarn attention factor on the rotated channels)
            for p in (0, 3, 17, 101):
                y = rot(q, p)
                rd_ = cfg.rotary_dim
                assert abs(y[..., :rd_].norm() - af * q[..., :rd_].norm()) < 1e-12
                assert torch.equal(y[..., rd_:], q[..., rd_:])
            # q.k depends only on i-j (dynamic: only at one length; rot takes the length from its one position)
            for delta in ((0, 1, 5, -3) if ext != "dynamic" else ()):
                vals = [float((rot(q, i) * rot(k, i - delta)).sum()) for i in (3, 10, 40, 77)]
                assert max(vals) - min(vals) < 1e-12, (pe, ext, delta, vals)
    print("self-checks passed (RoPE norm preservation, relative property)")


def rope_scaling_fixtures(outdir):
    """The HF rope_scaling fields beyond type and factor (issue 15): dynamic NTK (lengths 10 > original 6), YaRN
    with explicit betas and attention_factor, Llama 3 with non-default frequency factors. Every field is a root
    attribute (write_attrs)."""
    ext = dict(pos_encoding="rope", rope_scale=2.0, rope_orig_len=6)
    model_fixture(outdir, "model_rope_dynamic.h5", dict(ext, rope_ext="dynamic"))
    # original lengths where the betas / frequency factors move the ramp (with L 6 every pair is interpolated)
    model_fixture(outdir, "model_rope_yarn_factors.h5", dict(ext, rope_ext="yarn", rope_orig_len=512,
                                                             rope_attention_factor=1.5, yarn_beta_fast=4.0,
                                                             yarn_beta_slow=0.25))
    model_fixture(outdir, "model_rope_llama3_factors.h5", dict(ext, pos_encoding="rope-half", rope_ext="llama3",
                                                               rope_orig_len=40, llama3_low_freq_factor=2.0,
                                                               llama3_high_freq_factor=8.0))


def fire_fixtures(outdir):
    """FIRE (issue 15): a threshold init_L 6 (L = |L_multiplier| 6 near 6) so that rows 0..9 lie on both sides of
    it; with sorted random positions from [0, 24) and init_L 12, per-row positions ([B, H, T, S] biases)."""
    model_fixture(outdir, "model_fire.h5", dict(pos_encoding="fire", fire_init_L=6.0))
    model_fixture(outdir, "model_fire_positions.h5", dict(pos_encoding="fire", fire_init_L=12.0, fire_eps=1e-3,
                                                          fire_mlp_width=8), positions=True)


def kerple_fixtures(outdir):
    """KERPLE (issue 21): log and power, positions 0..9 and sparse per-row positions (power); the parameters of
    layer 0 hold one r1 < eps and one r2 > 2, which the forward clamps in place (power: to 2; log: r2 stays)."""
    model_fixture(outdir, "model_kerple-log.h5", dict(pos_encoding="kerple-log"))
    model_fixture(outdir, "model_kerple-power.h5", dict(pos_encoding="kerple-power"))
    model_fixture(outdir, "model_kerple_positions.h5", dict(pos_encoding="kerple-power"), positions=True)


def fire_self_check():
    """ref_model.FIRE against golden_enc.Fire (written separately from the listing) on random parameters."""
    import golden_enc
    g = gen("fire_self_check")
    a = R.FIRE(3, 8, 0.3, 6.5, 1e-6).double()
    b = golden_enc.Fire(3, 8, 0.3, 6.5, 1e-6).double()
    with torch.no_grad():
        for n, p in a.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
            dict(b.named_parameters())[n].copy_(p)
    q = torch.tensor([0, 3, 6, 7, 11, 40])
    k = torch.tensor([0, 1, 5, 6, 9, 11, 40])
    diff = (a(q[None], k[None])[0] - b(q, k)).abs().max().item()
    assert diff < 1e-14, diff
    print(f"self-check passed (ref_model FIRE == golden_enc Fire, max diff {diff:.1e})")


def grid_axes():
    """axes [3, 2, 13] of two rows (issue 24): a BOS at (0, 0, 0), then row 0: a 3x4 grid flattened row-major
    (frame 0, row r, column c); row 1: two 2x3 frames flattened frame by frame (frame 1 + f, row r, column c + 1)."""
    ax = torch.zeros(3, 2, 13, dtype=torch.long)
    for n in range(12):
        ax[:, 0, n + 1] = torch.tensor([0, n // 4, n % 4])
        ax[:, 1, n + 1] = torch.tensor([1 + n // 6, n % 6 // 3, n % 3 + 1])
    return ax


def grid_rot_fixtures(outdir):
    """The rotary encodings of the position axes (tools/ref_grid_rot.py) on grid_axes(), in float64: logits, loss
    and gradients as model_fixture's, plus /input/axes int32 [3, B, T]; partial rotary with NTK and an explicit
    M-RoPE section with YaRN show that rope_scaling applies."""
    ref_grid_rot.self_check()
    cases = [("model_rope-2d.h5", dict(pos_encoding="rope-2d")),
             ("model_rope-2d-pixtral.h5", dict(pos_encoding="rope-2d-pixtral")),
             ("model_rope-2d_partial.h5", dict(pos_encoding="rope-2d", rotary_dim=4, rope_ext="ntk", rope_scale=2.0)),
             ("model_mrope.h5", dict(pos_encoding="mrope", d_model=32)),
             ("model_mrope_section.h5", dict(pos_encoding="mrope", mrope_section_t=1, mrope_section_h=2,
                                             mrope_section_w=1, rope_ext="yarn", rope_scale=2.0, rope_orig_len=6))]
    axes = grid_axes()
    for fname, kw in cases:
        cfg = R.Config(**dict(SMALL, **kw))
        g = gen(fname)
        model = R.Model(cfg).double()
        p32 = init_module(model, g)
        tokens = torch.randint(0, cfg.vocab_size, (2, 13), generator=g)
        targets = torch.randint(0, cfg.vocab_size, (2, 13), generator=g)
        targets[torch.rand(2, 13, generator=g) < 0.25] = R.IGNORE_INDEX
        logits = model(tokens, None, axes)
        loss = R.lm_loss(logits, targets)
        model.zero_grad()
        loss.backward()
        swapped = model(tokens, None, axes[[0, 2, 1]])   # the control: rows and columns exchanged
        assert (swapped - logits).abs().max() > 1e-3 and logits.abs().max() < 20
        with h5py.File(os.path.join(outdir, fname), "w") as f:
            write_attrs(f, cfg)
            for n, v in p32.items():
                f.create_dataset(f"params/{n}", data=v.numpy().astype(np.float32))
            f.create_dataset("input/tokens", data=tokens.numpy().astype(np.int32))
            f.create_dataset("input/targets", data=targets.numpy().astype(np.int32))
            f.create_dataset("input/axes", data=axes.numpy().astype(np.int32))
            f.create_dataset("expected/logits", data=f64(logits))
            f.create_dataset("expected/loss", data=np.array([loss.item()], dtype=np.float64))
            for n, p in model.named_parameters():
                f.create_dataset(f"expected/grads/{n}", data=f64(p.grad))
        print(f"wrote {fname}: loss {loss.item():.6f}, rows/columns swapped move the logits by "
              f"{(swapped - logits).abs().max().item():.3g}")


def grid_bias_axes():
    """[3, 2, 13] (frame, row, column): a BOS at (0, 0, 0), then row 0 a 3 x 4 grid flattened row-major (frame 0),
    row 1 a 4 x 3 grid with rows and columns offset by 1 (frame 1): different ids per row, dc < 0 between
    neighbours of the raster order."""
    ax = torch.zeros(3, 2, 13, dtype=torch.long)
    for k in range(12):
        ax[:, 0, k + 1] = torch.tensor([0, k // 4, k % 4])
        ax[:, 1, k + 1] = torch.tensor([1, 1 + k // 3, 1 + k % 3])
    return ax


def grid_bias_fixtures(outdir):
    """The 2-D encodings of tools/ref_grid_bias.py (issue 24): model_<name>.h5 with /input/axes [3, B, T] (the C
    test feeds them to rg_model_forward_axes), two rows of lengths 13 and 9; learned-2d with tables of 5 rows and 6
    columns, t5-2d with the default buckets and with 8 buckets up to distance 5 (logarithmic buckets in use)."""
    RG.self_check()
    ax = grid_bias_axes()
    cases = (("learned-2d", "learned-2d", dict(learned_2d_max_rows=5, learned_2d_max_cols=6)),
             ("sinusoidal-2d", "sinusoidal-2d", {}), ("alibi-2d-manhattan", "alibi-2d-manhattan", {}),
             ("alibi-2d-euclidean", "alibi-2d-euclidean", {}), ("t5-2d", "t5-2d", {}),
             ("t5-2d_buckets", "t5-2d", dict(t5_2d_num_buckets=8, t5_2d_max_distance=5)))
    for fname, pe, kw in cases:
        cfg = RG.Config(**SMALL, pos_encoding=pe, **kw)
        name = f"model_{fname}.h5"
        g = gen(name)
        model = RG.Model(cfg).double()
        p32 = init_module(model, g)
        tokens = torch.zeros(2, 13, dtype=torch.long)
        targets = torch.full((2, 13), R.IGNORE_INDEX, dtype=torch.long)
        for b, L in enumerate((13, 9)):
            tokens[b, :L] = torch.randint(1, cfg.vocab_size, (L,), generator=g)
            targets[b, : L - 1] = tokens[b, 1:L]
        logits = model(tokens, axes=ax)
        loss = R.lm_loss(logits, targets)
        loss.backward()
        assert logits.abs().max() < 20, "logits not O(1)"
        # the axes are read: rows and columns swapped (ALiBi's distances are symmetric in them: the 1-D positions)
        other = model(tokens) if pe.startswith("alibi") else model(tokens, axes=ax[[0, 2, 1]])
        assert (other - logits).abs().max() > 1e-3, fname
        path = os.path.join(outdir, name)
        with h5py.File(path, "w") as f:
            write_attrs(f, cfg)
            for n, v in p32.items():
                f.create_dataset(f"params/{n}", data=v.numpy().astype(np.float32))
            f.create_dataset("input/tokens", data=tokens.numpy().astype(np.int32))
            f.create_dataset("input/targets", data=targets.numpy().astype(np.int32))
            f.create_dataset("input/axes", data=ax.numpy().astype(np.int32))
            f.create_dataset("expected/logits", data=f64(logits))
            f.create_dataset("expected/loss", data=np.array([loss.item()], dtype=np.float64))
            for n, p in model.named_parameters():
                f.create_dataset(f"expected/grads/{n}", data=f64(p.grad))
        print(f"wrote {path}: loss {loss.item():.6f}")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
    outdir = os.path.abspath(outdir)
    os.makedirs(outdir, exist_ok=True)
    self_checks()
    ext = dict(pos_encoding="rope", rope_scale=2.0, rope_orig_len=6)
    model_fixture(outdir, "model_none.h5", dict(pos_encoding="none"), adamw=True)
    model_fixture(outdir, "model_sinusoidal.h5", dict(pos_encoding="sinusoidal"))
    model_fixture(outdir, "model_learned.h5", dict(pos_encoding="learned"), positions=True)
    model_fixture(outdir, "model_t5.h5", dict(pos_encoding="t5"))
    model_fixture(outdir, "model_xl.h5", dict(pos_encoding="xl"))
    model_fixture(outdir, "model_alibi.h5", dict(pos_encoding="alibi"))
    model_fixture(outdir, "model_rope.h5", dict(pos_encoding="rope"), adamw=True)
    model_fixture(outdir, "model_rope-half.h5", dict(pos_encoding="rope-half"))
    model_fixture(outdir, "model_rope_partial.h5", dict(pos_encoding="rope-half", rotary_dim=4))
    for e in ("pi", "ntk", "yarn", "llama3"):
        model_fixture(outdir, f"model_rope_{e}.h5", dict(ext, rope_ext=e))
    rope_scaling_fixtures(outdir)
    model_fixture(outdir, "model_rope_positions.h5", dict(pos_encoding="rope"), positions=True)
    fire_self_check()
    fire_fixtures(outdir)
    kerple_fixtures(outdir)
    grid_rot_fixtures(outdir)
    grid_bias_fixtures(outdir)
    attn_fixture(outdir)
    golden_fixture(outdir)
    golden_rope.write(outdir)
    total = sum(os.path.getsize(os.path.join(outdir, n)) for n in os.listdir(outdir) if n.endswith(".h5"))
    print(f"total fixture size: {total} bytes")


if __name__ == "__main__":
    main()
