"""PyTorch reference of the rotary encodings of the position axes (frame, row, column): rope-2d, rope-2d-pixtral
and mrope (src/nn/pos_axial.c, src/nn/pos_mrope.c; docs/encodings.md).  Importing this module registers them in
tools/ref_model.py's ROPE_AXES, which Model.forward(tokens, positions, axes) reads.

Each function takes axes int64 [3, B, T] (frame, row, column; HF Qwen2-VL position_ids layout) and the Config, and
returns cos, sin float64 [B, T, rotary_dim/2] (attention factor included) and the pairing (half or interleaved),
written from the public formulas:
  rope-2d          naver-ai/rope-vit compute_axial_cis (Heo et al. 2024, RoPE-Axial) and HF Llama4VisionRotaryEmbedding:
                   freqs = base^(-arange(0, d, 4)[:d/4] / d), angles cat([col * freqs, row * freqs]), complex
                   (interleaved) pairs.
  rope-2d-pixtral  HF PixtralRotaryEmbedding: freqs = base^(-arange(0, d, 2) / d), cat([row * freqs[::2],
                   col * freqs[1::2]]), doubled for rotate_half (half-split pairs).
  mrope            HF Qwen2-VL: cos/sin of each axis over the doubled channel list, split by mrope_section * 2, chunk
                   i from axis i % 3 (apply_multimodal_rotary_pos_emb), rotate_half.
rope_scaling applies as in 1-D RoPE: the frequencies are ref_model.rope_params' (for "none" exactly the ones above,
checked by self_check), at the length largest id of the axes read + 1.
"""
import torch

import ref_model as R


def _angles(ids, inv, mult):
    """ids [B, T] int -> float64 [B, T, len(inv)] angles (ids * mult) * inv."""
    p = ids.to(torch.float64)
    if mult != 1.0:
        p = p * mult
    return p.unsqueeze(-1) * inv


def rope_2d(axes, cfg):
    inv, mult, af = R.rope_params(cfg, int(axes[1:].max().item()) + 1)
    freqs = inv[0::2]                       # base^(-4i/d), i < d/4
    ang = torch.cat([_angles(axes[2], freqs, mult), _angles(axes[1], freqs, mult)], dim=-1)
    return torch.cos(ang) * af, torch.sin(ang) * af, False


def rope_2d_pixtral(axes, cfg):
    inv, mult, af = R.rope_params(cfg, int(axes[1:].max().item()) + 1)
    ang = torch.cat([_angles(axes[1], inv[0::2], mult), _angles(axes[2], inv[1::2], mult)], dim=-1)
    return torch.cos(ang) * af, torch.sin(ang) * af, True


def mrope_section(cfg):
    """[t, h, w]: the config's, or (all 0) Qwen2-VL's [16, 24, 24] of 64 scaled to n = rotary_dim/2 pairs:
    h = w = round(3n/8) (halves up), t = n - 2h."""
    sec = [cfg.mrope_section_t, cfg.mrope_section_h, cfg.mrope_section_w]
    n = cfg.rotary_dim // 2
    if not any(sec):
        h = (3 * n + 4) // 8
        sec = [n - 2 * h, h, h]
    assert sum(sec) == n and min(sec) >= 0, sec
    return sec


def mrope(axes, cfg):
    inv, mult, af = R.rope_params(cfg, int(axes.max().item()) + 1)
    n = cfg.rotary_dim // 2
    freqs = torch.stack([_angles(axes[a], inv, mult) for a in range(3)])    # [3, B, T, n]
    emb = torch.cat([freqs, freqs], dim=-1)                                  # [3, B, T, 2n]
    sec2 = mrope_section(cfg) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate((emb.cos() * af).split(sec2, dim=-1))], dim=-1)
    sin = torch.cat([m[i % 3] for i, m in enumerate((emb.sin() * af).split(sec2, dim=-1))], dim=-1)
    return cos[..., :n], sin[..., :n], True


R.ROPE_AXES.update({"rope-2d": rope_2d, "rope-2d-pixtral": rope_2d_pixtral, "mrope": mrope})
NAMES = tuple(R.ROPE_AXES)


def self_check():
    """The frequencies as the sources write them; M-RoPE with equal ids on the three axes is rope-half."""
    cfg = R.Config(d_model=32, n_heads=2, pos_encoding="mrope")
    d, base = cfg.rotary_dim, cfg.rope_base
    g = torch.Generator()
    g.manual_seed(7)
    axes = torch.randint(0, 40, (3, 2, 5), generator=g)
    cos, _, _ = rope_2d(axes, cfg)
    f = 1.0 / base ** (torch.arange(0, d, 4, dtype=torch.float64)[: d // 4] / d)
    want = torch.cos(torch.cat([axes[2, ..., None] * f, axes[1, ..., None] * f], dim=-1))
    assert (cos - want).abs().max() < 1e-15
    cos, _, _ = rope_2d_pixtral(axes, cfg)
    f = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    want = torch.cos(torch.cat([axes[1, ..., None] * f[::2], axes[2, ..., None] * f[1::2]], dim=-1))
    assert (cos - want).abs().max() < 1e-15
    assert mrope_section(cfg) == [2, 3, 3] and mrope_section(R.Config(d_model=256, n_heads=2)) == [16, 24, 24]
    text = axes[0:1].expand(3, -1, -1)
    c1, s1, _ = mrope(text, cfg)
    c2, s2 = R.rope_cos_sin(axes[0], cfg)
    assert torch.equal(c1, c2) and torch.equal(s1, s2)
    print("self-check passed (ref_grid_rot: rope-vit / Pixtral frequencies, M-RoPE of text ids == rope-half)")
