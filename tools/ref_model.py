"""PyTorch reference model for ropegrad (decoder-only, pre-LayerNorm transformer).

This module is the numerical reference the C implementation is tested against
(see tools/gen_fixtures.py and tests/fixtures/README.md).  Everything here can
run in float64 (call model.double()); position tables (sinusoids, RoPE angles,
ALiBi slopes, XL relative sinusoids) are always computed in float64 and only
then cast to the model dtype.

Conventions
  * positions p are integers; by default p = 0..T-1, the forward pass accepts an
    optional int64 tensor positions [B,T] that replaces them.
  * relative distances (t5, xl, alibi) are computed from positions:
        i = query index, j = key index, rel = p_j - p_i (key minus query),
        dist = p_i - p_j (>= 0 for unmasked pairs when positions are sorted).
  * the causal mask is by index: key j > query i gets -inf.
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F

POS_ENCODINGS = ("none", "sinusoidal", "learned", "t5", "xl", "alibi", "rope", "rope-half", "fire", "kerple-log",
                 "kerple-power")
FIRE_DEFAULTS = dict(fire_mlp_width=32, fire_init_c=0.1, fire_init_L=512.0, fire_eps=1e-6)  # 0 in a config = these
ROPE_EXTS = ("none", "pi", "ntk", "yarn", "llama3", "dynamic")
HF_ROPE_TYPES = {"default": "none", "linear": "pi"}   # HF rope_type names that differ from ours
IGNORE_INDEX = -100
# Rotary encodings of the position axes (frame, row, column), registered by tools/ref_grid_rot.py (import it to
# use them): name -> fn(axes int64 [3, B, T], cfg) -> (cos, sin float64 [B, T, rotary_dim/2], half pairing).
ROPE_AXES = {}
MROPE_SECTION = ("mrope_section_t", "mrope_section_h", "mrope_section_w")   # in as_dict for mrope only


@dataclass
class Config:
    vocab_size: int = 30
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 256
    max_len: int = 160
    pos_encoding: str = "none"
    # RoPE; HF names (transformers PretrainedConfig / rope_scaling) in the comments
    rope_base: float = 10000.0     # rope_theta
    rotary_dim: int = 0            # 0 -> head_dim * partial_rotary_factor, or head_dim (resolved in __post_init__)
    partial_rotary_factor: float = 0.0  # partial_rotary_factor; 0 = unset
    rope_ext: str = "none"         # rope_scaling.rope_type (default = none, linear = pi, dynamic, yarn, llama3)
    rope_scale: float = 1.0        # rope_scaling.factor
    rope_orig_len: int = 0         # rope_scaling.original_max_position_embeddings; 0 -> max_len (resolved)
    rope_attention_factor: float = 0.0   # rope_scaling.attention_factor (yarn); 0 = 0.1 ln s + 1
    yarn_beta_fast: float = 32.0   # rope_scaling.beta_fast
    yarn_beta_slow: float = 1.0    # rope_scaling.beta_slow
    llama3_low_freq_factor: float = 1.0    # rope_scaling.low_freq_factor
    llama3_high_freq_factor: float = 4.0   # rope_scaling.high_freq_factor
    t5_num_buckets: int = 32
    t5_max_distance: int = 128
    causal: int = 1
    # FIRE (Li et al. 2023): 0 -> FIRE_DEFAULTS (the paper's reference listing), resolved in __post_init__
    fire_mlp_width: int = 0
    fire_init_c: float = 0.0
    fire_init_L: float = 0.0
    fire_eps: float = 0.0
    # KERPLE (Chi et al. 2022): the lower bound of r1, r2 (the reference code's eps); in as_dict for kerple only
    kerple_eps: float = 0.01
    # M-RoPE's section split (HF rope_scaling.mrope_section); all 0: derived (tools/ref_grid_rot.py)
    mrope_section_t: int = 0
    mrope_section_h: int = 0
    mrope_section_w: int = 0

    def __post_init__(self):
        assert self.d_model % self.n_heads == 0
        assert self.pos_encoding in POS_ENCODINGS or self.pos_encoding in ROPE_AXES, self.pos_encoding
        self.rope_ext = HF_ROPE_TYPES.get(self.rope_ext, self.rope_ext)
        assert self.rope_ext in ROPE_EXTS, self.rope_ext
        assert 0.0 <= self.partial_rotary_factor <= 1.0, self.partial_rotary_factor
        if not self.rotary_dim:
            self.rotary_dim = (int(self.head_dim * self.partial_rotary_factor) if self.partial_rotary_factor
                               else self.head_dim)
        elif self.partial_rotary_factor:
            assert self.rotary_dim == int(self.head_dim * self.partial_rotary_factor)
        assert self.rotary_dim % 2 == 0 and self.rotary_dim <= self.head_dim
        if not self.rope_orig_len:
            self.rope_orig_len = self.max_len
        for k, v in FIRE_DEFAULTS.items():
            if not getattr(self, k):
                setattr(self, k, type(v)(v))
        assert self.fire_mlp_width >= 1 and self.fire_init_L > 0 and self.fire_eps >= 0

    @property
    def head_dim(self):
        return self.d_model // self.n_heads

    def as_dict(self):
        d = asdict(self)
        if not self.pos_encoding.startswith("kerple"):
            del d["kerple_eps"]   # the fixtures of the other encodings stay as they were
        if self.pos_encoding != "mrope":
            for k in MROPE_SECTION:
                del d[k]
        return d

    @property
    def rope_theta(self):
        """HF's name for rope_base."""
        return self.rope_base

    @property
    def rope_scaling(self):
        """The HF rope_scaling dict of this config (every field, HF names)."""
        hf = {v: k for k, v in HF_ROPE_TYPES.items()}
        return dict(rope_type=hf.get(self.rope_ext, self.rope_ext), factor=self.rope_scale,
                    original_max_position_embeddings=self.rope_orig_len,
                    attention_factor=self.rope_attention_factor or None,
                    beta_fast=self.yarn_beta_fast, beta_slow=self.yarn_beta_slow,
                    low_freq_factor=self.llama3_low_freq_factor, high_freq_factor=self.llama3_high_freq_factor)


# ---------------------------------------------------------------------------
# Absolute sinusoidal encoding (Vaswani et al. 2017)
# ---------------------------------------------------------------------------
def sinusoidal_table(positions, d_model):
    """PE(p,2i) = sin(p / 10000^(2i/d)), PE(p,2i+1) = cos(same).  float64.
    positions: tensor of any shape -> result shape positions.shape + [d_model]."""
    p = positions.to(torch.float64).unsqueeze(-1)
    i = torch.arange(0, d_model, 2, dtype=torch.float64)
    ang = p / torch.pow(torch.tensor(10000.0, dtype=torch.float64), i / d_model)
    pe = torch.zeros(*positions.shape, d_model, dtype=torch.float64)
    pe[..., 0::2] = torch.sin(ang)
    pe[..., 1::2] = torch.cos(ang)
    return pe


# ---------------------------------------------------------------------------
# T5 relative position buckets.
# Source: Hugging Face transformers, models/t5/modeling_t5.py,
# T5Attention._relative_position_bucket (reproduced from its arithmetic:
# torch.log on float32, divide by math.log(...) (python double), multiply,
# truncate with .to(torch.long), clamp to num_buckets-1).
# ---------------------------------------------------------------------------
def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """relative_position = key_pos - query_pos (int64 tensor). Returns int64 buckets."""
    rel = relative_position.to(torch.long)
    buckets = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (rel > 0).to(torch.long) * num_buckets
        n = torch.abs(rel)
    else:
        n = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    # NOTE: n=0 gives log(0) = -inf here, but it is masked by is_small (as in HF).
    large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, n, large)


# ---------------------------------------------------------------------------
# ALiBi slopes.  Source: Press et al. 2022, reference repo ofirpress/attention_with_linear_biases,
# fairseq/models/transformer.py get_slopes().
# ---------------------------------------------------------------------------
def alibi_slopes(n_heads):
    def pow2(n):
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))   # = 2^(-8/n)
        return [start * start ** i for i in range(n)]      # 2^(-8(h+1)/n)
    if math.log2(n_heads).is_integer():
        return pow2(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return pow2(closest) + alibi_slopes(2 * closest)[0::2][: n_heads - closest]


# ---------------------------------------------------------------------------
# RoPE frequencies and extensions.  All in float64.
#   d = rotary_dim, theta_i = base^(-2i/d), i < d/2.
# ---------------------------------------------------------------------------
def rope_default_inv_freq(d, base):
    i = torch.arange(0, d, 2, dtype=torch.float64)
    return 1.0 / torch.pow(torch.tensor(float(base), dtype=torch.float64), i / d)


def ntk_base(base, scale, d):
    """Static NTK-aware scaling: base' = base * s^(d/(d-2)).
    (Same exponent as HF _compute_dynamic_ntk_parameters, with the static factor s.)"""
    return base * scale ** (d / (d - 2))


def dynamic_ntk_base(base, scale, d, orig_len, seq_len):
    """Dynamic NTK (HF _compute_dynamic_ntk_parameters): the length is max(seq_len, orig_len), so the base is the
    original one at or below orig_len; base * (s * n / L - (s - 1)) ** (d / (d - 2))."""
    n = max(seq_len, orig_len)
    return base * (scale * n / orig_len - (scale - 1)) ** (d / (d - 2))


def yarn_params(d, base, scale, orig_len, beta_fast=32.0, beta_slow=1.0, attention_factor=None):
    """YaRN inverse frequencies and attention factor.
    Source: Hugging Face transformers, modeling_rope_utils.py, _compute_yarn_parameters
    (defaults: attention_factor = get_mscale(factor) = 0.1*ln(s)+1 for s>1,
    beta_fast 32, beta_slow 1, truncate=True -> floor(low), ceil(high)).
    HF computes the frequency vectors in float32; here everything is float64."""
    def get_mscale(s, mscale=1.0):
        return 1.0 if s <= 1 else 0.1 * mscale * math.log(s) + 1.0

    def find_correction_dim(num_rotations):
        return (d * math.log(orig_len / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = math.floor(find_correction_dim(beta_fast))
    high = math.ceil(find_correction_dim(beta_slow))
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # HF: prevent singularity
    ramp = torch.clamp((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low), 0.0, 1.0)
    pos_freqs = torch.pow(torch.tensor(float(base), dtype=torch.float64),
                          torch.arange(0, d, 2, dtype=torch.float64) / d)
    inv_extrap = 1.0 / pos_freqs
    inv_interp = 1.0 / (scale * pos_freqs)
    extrap_factor = 1.0 - ramp
    inv_freq = inv_interp * (1.0 - extrap_factor) + inv_extrap * extrap_factor
    return inv_freq, attention_factor if attention_factor else get_mscale(scale)


def llama3_inv_freq(d, base, factor, orig_len, low_freq_factor=1.0, high_freq_factor=4.0):
    """Source: Hugging Face transformers, modeling_rope_utils.py, _compute_llama3_parameters."""
    inv_freq = rope_default_inv_freq(d, base)
    low_freq_wavelen = orig_len / low_freq_factor
    high_freq_wavelen = orig_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_l = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (orig_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    is_medium = (~(wavelen < high_freq_wavelen)) & (~(wavelen > low_freq_wavelen))
    return torch.where(is_medium, smoothed, inv_l)


def rope_params(cfg, seq_len=0):
    """Returns (inv_freq float64 [rotary_dim/2], position multiplier, attention factor).
    angle(p, i) = (p * pos_mult) * inv_freq[i]; cos and sin are multiplied by attn_factor.
    seq_len (largest position + 1) is read by dynamic only."""
    d, base, s = cfg.rotary_dim, float(cfg.rope_base), float(cfg.rope_scale)
    ext = cfg.rope_ext
    if ext == "none":
        return rope_default_inv_freq(d, base), 1.0, 1.0
    if ext == "pi":          # position interpolation (Chen et al. 2023; HF "linear"): p -> p/s
        return rope_default_inv_freq(d, base), 1.0 / s, 1.0
    if ext == "ntk":
        return rope_default_inv_freq(d, ntk_base(base, s, d)), 1.0, 1.0
    if ext == "dynamic":
        return rope_default_inv_freq(d, dynamic_ntk_base(base, s, d, cfg.rope_orig_len, seq_len)), 1.0, 1.0
    if ext == "yarn":
        inv, af = yarn_params(d, base, s, cfg.rope_orig_len, cfg.yarn_beta_fast, cfg.yarn_beta_slow,
                              cfg.rope_attention_factor)
        return inv, 1.0, af
    if ext == "llama3":
        return llama3_inv_freq(d, base, s, cfg.rope_orig_len, cfg.llama3_low_freq_factor,
                               cfg.llama3_high_freq_factor), 1.0, 1.0
    raise ValueError(ext)


def rope_cos_sin(positions, cfg):
    """positions [B,T] int -> cos, sin float64 [B,T,rotary_dim/2] (attention factor included)."""
    inv, mult, af = rope_params(cfg, int(positions.max().item()) + 1)
    p = positions.to(torch.float64)
    if mult != 1.0:
        p = p * mult
    ang = p.unsqueeze(-1) * inv
    return torch.cos(ang) * af, torch.sin(ang) * af


def apply_rope(x, cos, sin, rotary_dim, half):
    """x [B,H,T,hd]; cos/sin [B,T,rd/2] (already in x's dtype).
    interleaved (half=False): pairs (2i, 2i+1); half (HF rotate_half): pairs (i, i+rd/2).
    (x_a, x_b) -> (x_a cos - x_b sin, x_a sin + x_b cos); channels >= rotary_dim untouched."""
    rd = rotary_dim
    c = cos.unsqueeze(1)
    s = sin.unsqueeze(1)
    xr, xp = x[..., :rd], x[..., rd:]
    if half:
        xa, xb = xr[..., : rd // 2], xr[..., rd // 2:]
        out = torch.cat([xa * c - xb * s, xa * s + xb * c], dim=-1)
    else:
        xa, xb = xr[..., 0::2], xr[..., 1::2]
        out = torch.stack([xa * c - xb * s, xa * s + xb * c], dim=-1).flatten(-2)
    return torch.cat([out, xp], dim=-1)


def xl_rel_table(dist, d_model):
    """Transformer-XL relative sinusoid R_k = concat(sin(k w), cos(k w)), w_i = 10000^(-2i/d),
    i < d/2; first d/2 channels sin, last d/2 cos.  dist: any-shape tensor -> [..., d] float64."""
    w = 1.0 / torch.pow(torch.tensor(10000.0, dtype=torch.float64),
                        torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    a = dist.to(torch.float64).unsqueeze(-1) * w
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1)


# ---------------------------------------------------------------------------
# FIRE.  Source: Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context
# Transformers" (arXiv:2310.04418), sec. 3 and the reference listing of its appendix: one hidden layer of
# mlp_width ReLU units with one output per head, psi(x) = log(|c x| + 1), threshold L = |L_multiplier * init_L|,
# eps added to the normalizer.  Generalized from the listing's arange positions to query/key positions.
# init_L is a plain constant here (the listing keeps it as a frozen nn.Parameter, which would be in the
# state_dict; ropegrad stores it in the config instead).
# ---------------------------------------------------------------------------
class FIRE(nn.Module):
    def __init__(self, n_heads, mlp_width=32, init_c=0.1, init_L=512.0, eps=1e-6):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, mlp_width), nn.ReLU(), nn.Linear(mlp_width, n_heads))
        self.c = nn.Parameter(torch.tensor(float(init_c)))
        self.L_multiplier = nn.Parameter(torch.tensor(1.0))
        self.init_L = float(init_L)
        self.eps = float(eps)

    def forward(self, q_pos, k_pos):
        """q_pos [B,T], k_pos [B,S] int -> bias [B,H,T,S] = mlp(psi(p_i - p_j) / (psi(max(L, p_i)) + eps))."""
        dtype = self.c.dtype
        q = q_pos.to(dtype)
        dist = q[:, :, None] - k_pos.to(dtype)[:, None, :]
        L = torch.abs(self.L_multiplier * self.init_L)
        psi = lambda x: torch.log(torch.abs(self.c * x) + 1)  # noqa: E731
        norm = psi(torch.max(q, L))[:, :, None] + self.eps
        return self.mlp((psi(dist) / norm).unsqueeze(-1)).permute(0, 3, 1, 2)


class KERPLE(nn.Module):
    """KERPLE (Chi et al. 2022, NeurIPS, sec. 4.2; reference code chijames/KERPLE ParallelKerpleLog /
    ParallelKerplePower): bias[h,i,j] = -r1 log(1 + r2 d) (log) or -r1 d^r2 (power), d = |p_i - p_j|, r1, r2 [H]
    per layer; before each forward the parameters are clamped in place to >= eps (power: r2 <= 2), as the reference
    code's `p.data = p.data.clamp(...)`. Initialization as the reference: log r1 ~ U(0,2), r2 ~ U(0,1); power
    r1 ~ U(0,1), r2 ~ U(0,2) (the fixtures overwrite it)."""
    def __init__(self, n_heads, power, eps=0.01):
        super().__init__()
        self.power, self.eps = power, float(eps)
        self.r1 = nn.Parameter(torch.rand(n_heads) * (1.0 if power else 2.0))
        self.r2 = nn.Parameter(torch.rand(n_heads) * (2.0 if power else 1.0))

    def forward(self, q_pos, k_pos):
        """q_pos [B,T], k_pos [B,S] int -> bias [B,H,T,S]."""
        self.r1.data = self.r1.data.clamp(min=self.eps)
        self.r2.data = self.r2.data.clamp(min=self.eps, max=2.0) if self.power else self.r2.data.clamp(min=self.eps)
        d = (q_pos[:, :, None] - k_pos[:, None, :]).abs().to(self.r1.dtype)[:, None]    # [B,1,T,S]
        r1, r2 = self.r1[None, :, None, None], self.r2[None, :, None, None]
        return -r1 * d.pow(r2) if self.power else -r1 * torch.log(1 + r2 * d)


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------
class Attention(nn.Module):
    def __init__(self, d_model, n_heads, xl=False, fire=None, kerple=None):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.head_dim = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.xl = xl
        if xl:
            self.r_proj = nn.Linear(d_model, d_model, bias=False)
            self.u = nn.Parameter(torch.zeros(n_heads, self.head_dim))
            self.v = nn.Parameter(torch.zeros(n_heads, self.head_dim))
        if fire is not None:   # dict of FIRE's keyword arguments; registered after o_proj (state_dict order)
            self.fire = FIRE(n_heads, **fire)
        if kerple is not None:  # dict of KERPLE's keyword arguments; registered after o_proj
            self.kerple = KERPLE(n_heads, **kerple)

    def _split(self, t):  # [B,T,d] -> [B,H,T,hd]
        B, T, _ = t.shape
        return t.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mem=None, causal=True, rope=None, bias=None, xl_R=None, fire_pos=None, kerple_pos=None):
        """x [B,T,d] queries; mem [B,S,d] keys/values source (default x).
        rope: (cos, sin, rotary_dim, half) or None; bias: additive [B or 1, H, T, S] or None;
        xl_R: relative sinusoids [B,T,S,d] (float, model dtype) for Transformer-XL;
        fire_pos: (query positions [B,T], key positions [B,S]) for this layer's FIRE bias."""
        src = x if mem is None else mem
        q = self._split(self.q_proj(x))
        k = self._split(self.k_proj(src))
        val = self._split(self.v_proj(src))
        if rope is not None:
            cos, sin, rd, half = rope
            q = apply_rope(q, cos, sin, rd, half)
            k = apply_rope(k, cos, sin, rd, half)
        scale = 1.0 / math.sqrt(self.head_dim)
        if self.xl:
            B, T, S, _ = xl_R.shape
            r = self.r_proj(xl_R).view(B, T, S, self.n_heads, self.head_dim)
            qu = q + self.u[None, :, None, :]
            qv = q + self.v[None, :, None, :]
            scores = (qu @ k.transpose(-1, -2) + torch.einsum("bhid,bijhd->bhij", qv, r)) * scale
        else:
            scores = (q @ k.transpose(-1, -2)) * scale
        if bias is not None:
            scores = scores + bias
        if fire_pos is not None:
            scores = scores + self.fire(*fire_pos)
        if kerple_pos is not None:
            scores = scores + self.kerple(*kerple_pos)
        if causal:
            T, S = scores.shape[-2], scores.shape[-1]
            mask = torch.ones(T, S, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        att = torch.softmax(scores, dim=-1)
        o = (att @ val).transpose(1, 2).reshape(x.shape[0], x.shape[1], self.d_model)
        return self.o_proj(o)


class MLP(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model, eps=1e-5)
        fire = (dict(mlp_width=cfg.fire_mlp_width, init_c=cfg.fire_init_c, init_L=cfg.fire_init_L, eps=cfg.fire_eps)
                if cfg.pos_encoding == "fire" else None)
        kerple = (dict(power=cfg.pos_encoding == "kerple-power", eps=cfg.kerple_eps)
                  if cfg.pos_encoding.startswith("kerple") else None)
        self.attn = Attention(cfg.d_model, cfg.n_heads, xl=(cfg.pos_encoding == "xl"), fire=fire, kerple=kerple)
        self.ln2 = nn.LayerNorm(cfg.d_model, eps=1e-5)
        self.mlp = MLP(cfg.d_model, cfg.d_ff)

    def forward(self, h, **kw):
        h = h + self.attn(self.ln1(h), **kw)
        return h + self.mlp(self.ln2(h))


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if cfg.pos_encoding == "learned":
            self.pos_emb = nn.Embedding(cfg.max_len, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        if cfg.pos_encoding == "t5":
            self.rel_bias = nn.Embedding(cfg.t5_num_buckets, cfg.n_heads)
        self.ln_f = nn.LayerNorm(cfg.d_model, eps=1e-5)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def forward(self, tokens, positions=None, axes=None):
        """Logits of every position: the C model's rg_model_forward without a KV cache.

        tokens: int64 (or int32) tensor [B, T] of token ids in [0, vocab_size).
        positions: optional integer tensor [B, T], the position id of every token (default 0..T-1 in every row;
            sorted random positions for randomized-position runs). Absolute encodings read it directly
            (learned: every id < max_len); relative ones (t5, xl, alibi, fire) use the differences p_j - p_i;
            rope / rope-half rotate by it (with the cfg's rope_ext scaling).
        axes: optional integer tensor [3, B, T], the (frame, row, column) ids of every token, read by the encodings
            of ROPE_AXES (tools/ref_grid_rot.py) and by the 2-D biases (tools/ref_grid_bias.py); default: every axis is
            the position.
        Returns float logits [B, T, vocab_size] in the model's dtype (float32, or float64 after model.double()),
        before the softmax; no loss (lm_loss(logits, targets) computes it, targets -100 not counted). The causal
        mask is by index (cfg.causal). Gradients flow as in any nn.Module.
        """
        cfg = self.cfg
        B, T = tokens.shape
        if positions is None:
            positions = torch.arange(T, dtype=torch.long).unsqueeze(0).expand(B, T)
        positions = positions.to(torch.long)
        dtype = self.tok_emb.weight.dtype
        pe = cfg.pos_encoding
        h = self.tok_emb(tokens)
        if pe == "sinusoidal":
            h = h * math.sqrt(cfg.d_model) + sinusoidal_table(positions, cfg.d_model).to(dtype)
        elif pe == "learned":
            h = h + self.pos_emb(positions)
        kw = dict(causal=bool(cfg.causal))
        rel = positions[:, None, :] - positions[:, :, None]     # [B,T(i),T(j)] = p_j - p_i
        if pe == "t5":
            bucket = t5_relative_position_bucket(rel, bidirectional=not cfg.causal,
                                                 num_buckets=cfg.t5_num_buckets,
                                                 max_distance=cfg.t5_max_distance)
            kw["bias"] = self.rel_bias(bucket).permute(0, 3, 1, 2)           # [B,H,T,T]
        elif pe == "alibi":
            m = torch.tensor(alibi_slopes(cfg.n_heads), dtype=torch.float64)
            kw["bias"] = (-m[None, :, None, None] * (-rel)[:, None].to(torch.float64)).to(dtype)
        elif pe == "xl":
            kw["xl_R"] = xl_rel_table(-rel, cfg.d_model).to(dtype)           # distance p_i - p_j
        elif pe in ("rope", "rope-half"):
            cos, sin = rope_cos_sin(positions, cfg)
            kw["rope"] = (cos.to(dtype), sin.to(dtype), cfg.rotary_dim, pe == "rope-half")
        elif pe in ROPE_AXES:
            ax = positions.unsqueeze(0).expand(3, B, T) if axes is None else axes.to(torch.long)
            cos, sin, half = ROPE_AXES[pe](ax, cfg)
            kw["rope"] = (cos.to(dtype), sin.to(dtype), cfg.rotary_dim, half)
        elif pe == "fire":
            kw["fire_pos"] = (positions, positions)
        elif pe.startswith("kerple"):
            kw["kerple_pos"] = (positions, positions)
        for blk in self.blocks:
            h = blk(h, **kw)
        return self.lm_head(self.ln_f(h))


def lm_loss(logits, targets):
    """Mean cross-entropy over targets != -100."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long(),
                           ignore_index=IGNORE_INDEX, reduction="mean")


# ---------------------------------------------------------------------------
# Optimisation reference
# ---------------------------------------------------------------------------
def lr_schedule(step, peak, warmup, total, min_frac):
    """Learning rate for the step with index `step` (0-based, the step being taken):
    linear warmup to peak over `warmup` steps, then cosine decay to min_frac*peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (min_frac + (1.0 - min_frac) * 0.5 * (1.0 + math.cos(math.pi * progress)))


def decay_param_groups(model, weight_decay):
    """Weight decay only on parameters with exactly 2 dims."""
    named = list(model.named_parameters())
    return [
        {"params": [p for _, p in named if p.dim() == 2], "weight_decay": weight_decay},
        {"params": [p for _, p in named if p.dim() != 2], "weight_decay": 0.0},
    ]


def train_steps(model, tokens, targets, positions, *, lr, betas, eps, weight_decay, clip,
                warmup, total_steps, min_lr_frac):
    """Runs total_steps AdamW steps (torch.optim.AdamW) on one fixed batch.
    Each step: forward, loss, backward, grad-norm clip (clip_grad_norm_), lr from lr_schedule, step.
    Returns (losses, pre-clip grad norms) as lists of floats."""
    opt = torch.optim.AdamW(decay_param_groups(model, weight_decay), lr=lr, betas=betas, eps=eps,
                            foreach=False)
    losses, norms = [], []
    for s in range(total_steps):
        opt.zero_grad(set_to_none=True)
        loss = lm_loss(model(tokens, positions), targets)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        cur = lr_schedule(s, lr, warmup, total_steps, min_lr_frac)
        for g in opt.param_groups:
            g["lr"] = cur
        opt.step()
        losses.append(loss.item())
        norms.append(float(gn))
    return losses, norms
