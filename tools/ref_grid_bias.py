"""PyTorch reference of ropegrad's 2-D absolute encodings and biases (src/nn/pos_grid_bias.h, issue 24 sec. 2).

The model is tools/ref_model.py's (the same Block, LayerNorm, GELU MLP, causal mask by index), with the position
signal read from the row and column axes of axes [3, B, T] (frame, row, column; the C model's
rg_model_forward_axes). Without axes every axis is the 1-D position (as the C model).

  learned-2d          h = tok + pos_emb_row(r) + pos_emb_col(c)
  sinusoidal-2d       h = tok * sqrt(d) + sincos_2d(r, c)   (MAE get_2d_sincos_pos_embed: first half the column)
  alibi-2d-manhattan  bias = -m_h (|r_i - r_j| + |c_i - c_j|)
  alibi-2d-euclidean  bias = -m_h sqrt((r_i - r_j)^2 + (c_i - c_j)^2)
  t5-2d               bias = rel_bias_row(bucket(r_j - r_i)) + rel_bias_col(bucket(c_j - c_i)), bidirectional buckets

Parameter names and state_dict order are the C model's: tok_emb, [pos_emb_row, pos_emb_col], blocks,
[rel_bias_row, rel_bias_col], ln_f, lm_head. Tables and angles in float64, cast to the model dtype.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn

import ref_model as R

GRID_ENCODINGS = ("learned-2d", "sinusoidal-2d", "alibi-2d-manhattan", "alibi-2d-euclidean", "t5-2d")
SETTINGS = {"learned-2d": ("learned_2d_max_rows", "learned_2d_max_cols"),
            "t5-2d": ("t5_2d_num_buckets", "t5_2d_max_distance")}


@dataclass
class Config(R.Config):
    learned_2d_max_rows: int = 0   # 0 -> max_len (resolved)
    learned_2d_max_cols: int = 0
    t5_2d_num_buckets: int = 32
    t5_2d_max_distance: int = 128

    def __post_init__(self):
        pe = self.pos_encoding
        assert pe in GRID_ENCODINGS, pe
        self.pos_encoding = "none"    # ref_model's checks of the 1-D encodings
        super().__post_init__()
        self.pos_encoding = pe
        self.learned_2d_max_rows = self.learned_2d_max_rows or self.max_len
        self.learned_2d_max_cols = self.learned_2d_max_cols or self.max_len
        if pe == "sinusoidal-2d":
            assert self.d_model % 4 == 0
        if pe == "t5-2d":
            assert self.t5_2d_max_distance > self.t5_2d_num_buckets // 4

    def as_dict(self):
        d = super().as_dict()
        for enc, keys in SETTINGS.items():
            if enc != self.pos_encoding:
                for k in keys:
                    del d[k]
        return d


def sincos_2d(row, col, d_model):
    """[..., d] float64: [sin(c w), cos(c w), sin(r w), cos(r w)], w_k = 10000^(-k/q), q = d/4 (MAE's layout:
    its meshgrid(grid_w, grid_h) makes grid[0], the first half, the width)."""
    q = d_model // 4
    w = 1.0 / torch.pow(torch.tensor(10000.0, dtype=torch.float64), torch.arange(q, dtype=torch.float64) / q)
    a = col.to(torch.float64).unsqueeze(-1) * w
    b = row.to(torch.float64).unsqueeze(-1) * w
    return torch.cat([torch.sin(a), torch.cos(a), torch.sin(b), torch.cos(b)], dim=-1)


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        pe = cfg.pos_encoding
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if pe == "learned-2d":
            self.pos_emb_row = nn.Embedding(cfg.learned_2d_max_rows, cfg.d_model)
            self.pos_emb_col = nn.Embedding(cfg.learned_2d_max_cols, cfg.d_model)
        self.blocks = nn.ModuleList([R.Block(cfg) for _ in range(cfg.n_layers)])
        if pe == "t5-2d":
            self.rel_bias_row = nn.Embedding(cfg.t5_2d_num_buckets, cfg.n_heads)
            self.rel_bias_col = nn.Embedding(cfg.t5_2d_num_buckets, cfg.n_heads)
        self.ln_f = nn.LayerNorm(cfg.d_model, eps=1e-5)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def _bias(self, row, col, dtype):
        """[B, H, T, T] additive bias of the score-bias encodings, or None."""
        cfg, pe = self.cfg, self.cfg.pos_encoding
        dr = row[:, None, :] - row[:, :, None]       # [B, T(i), T(j)] = r_j - r_i
        dc = col[:, None, :] - col[:, :, None]
        if pe.startswith("alibi-2d"):
            m = torch.tensor(R.alibi_slopes(cfg.n_heads), dtype=torch.float64)[None, :, None, None]
            dr64, dc64 = dr.to(torch.float64)[:, None], dc.to(torch.float64)[:, None]
            dist = dr64.abs() + dc64.abs() if pe == "alibi-2d-manhattan" else torch.sqrt(dr64 ** 2 + dc64 ** 2)
            return (-m * dist).to(dtype)
        if pe == "t5-2d":
            kw = dict(bidirectional=True, num_buckets=cfg.t5_2d_num_buckets, max_distance=cfg.t5_2d_max_distance)
            br = R.t5_relative_position_bucket(dr, **kw)
            bc = R.t5_relative_position_bucket(dc, **kw)
            return (self.rel_bias_row(br) + self.rel_bias_col(bc)).permute(0, 3, 1, 2)
        return None

    def forward(self, tokens, positions=None, axes=None):
        """Logits [B, T, vocab] of every token (no KV cache). positions [B, T] (default 0..T-1) is only the default
        of every axis; axes [3, B, T] (frame, row, column) integer ids: row and column are read."""
        cfg, pe = self.cfg, self.cfg.pos_encoding
        B, T = tokens.shape
        if positions is None:
            positions = torch.arange(T, dtype=torch.long).unsqueeze(0).expand(B, T)
        if axes is None:
            axes = positions.to(torch.long).unsqueeze(0).expand(3, B, T)
        row, col = axes[1].to(torch.long), axes[2].to(torch.long)
        dtype = self.tok_emb.weight.dtype
        h = self.tok_emb(tokens)
        if pe == "learned-2d":
            h = h + self.pos_emb_row(row) + self.pos_emb_col(col)
        elif pe == "sinusoidal-2d":
            h = h * math.sqrt(cfg.d_model) + sincos_2d(row, col, cfg.d_model).to(dtype)
        kw = dict(causal=bool(cfg.causal), bias=self._bias(row, col, dtype))
        for blk in self.blocks:
            h = blk(h, **kw)
        return self.lm_head(self.ln_f(h))


def self_check():
    """sincos_2d against a scalar transcription of MAE's get_2d_sincos_pos_embed_from_grid (numpy-free), and the
    Manhattan / Euclidean biases against scalar loops."""
    d = 16
    for r, c in ((0, 0), (2, 5), (7, 3)):
        want = []
        for p in (c, r):       # grid[0] = w (column) first
            om = [1.0 / 10000 ** (k / (d // 4)) for k in range(d // 4)]
            want += [math.sin(p * o) for o in om] + [math.cos(p * o) for o in om]
        got = sincos_2d(torch.tensor(r), torch.tensor(c), d).tolist()
        assert max(abs(a - b) for a, b in zip(got, want)) < 1e-15, (r, c)
    cfg = Config(vocab_size=5, d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=8, pos_encoding="alibi-2d-euclidean")
    m = Model(cfg).double()
    row, col = torch.tensor([[0, 1, 1]]), torch.tensor([[0, 2, 0]])
    b = m._bias(row, col, torch.float64)
    sl = R.alibi_slopes(2)
    for h in range(2):
        for i in range(3):
            for j in range(3):
                dd = math.hypot(row[0, i] - row[0, j], col[0, i] - col[0, j])
                assert abs(b[0, h, i, j].item() + sl[h] * dd) < 1e-15
