#!/usr/bin/python3
"""Load a ropegrad HDF5 checkpoint (docs/checkpoint.md) into the PyTorch reference model.

    /usr/bin/python3 tools/ckpt_to_torch.py CKPT.h5 [--logits LOGITS.h5] [--out state_dict.pt]

Builds tools/ref_model.py's Model from the checkpoint's /config, turns /params into a state_dict and loads it
with strict=True (every name and shape must match).  A checkpoint of an encoding the reference model does not
have (a program's own, registered with rg_pos_register) loads into the reference model without a position
encoding: its parameters are carried under their names (kept in --out's state_dict) and listed as the ones the
reference model lacks; its settings are listed as unknown /config attributes; --logits is then not comparable.  --logits FILE compares the model's logits on FILE's
/tokens (int32 [B, T]) with FILE's /logits (the C forward, float32 [B, T, V]), in float32 and float64.
--out saves the state_dict with torch.save.  Needs Debian's python3-torch and python3-h5py (not needed by CI).
"""
import argparse
import dataclasses
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_model import POS_ENCODINGS, ROPE_AXES, Config, Model  # noqa: E402
import ref_grid_rot  # noqa: E402,F401  (registers rope-2d, rope-2d-pixtral, mrope in ROPE_AXES)


DERIVED_ATTRS = {"rope_layout"}             # /config attributes that are not model fields (derived from them)
# /config attributes of files written before the experiment's settings moved to /run (same format_version 1):
# their name in /config -> their key in /run (train_order's settings table)
LEGACY_RUN_ATTRS = {"task": "task", "L_train": "train_len", "seed": "seed"}


def _value(v):
    """h5py attribute -> plain Python value (fixed-length strings come back as numpy bytes)."""
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("ascii")
    if isinstance(v, np.generic):
        return v.item()
    return v


def read_checkpoint(path):
    """Returns (Config, state_dict with the reference model's shapes, the run's settings as a dict, the name of an
    encoding the reference model lacks or None).

    An encoding the reference model does not have gives a Config without position encoding ("none"); the state_dict
    still holds every /params tensor under its name.

    The run's settings are the /run attributes (train_order writes task, train_len, seed, batch, ...); for an older
    file, its /config task, L_train and seed are returned under their /run keys (task, train_len, seed)."""
    with h5py.File(path, "r") as f:
        fmt = _value(f.attrs.get("format", b""))
        if fmt != "ropegrad-checkpoint" or int(f.attrs["format_version"]) != 1:
            raise ValueError(f"{path}: not a ropegrad checkpoint version 1 (format {fmt!r})")
        attrs = {k: _value(v) for k, v in f["config"].attrs.items()}
        run = {k: _value(v) for k, v in f["run"].attrs.items()}
        for old, new in LEGACY_RUN_ATTRS.items():
            if old in attrs and new not in run:
                run[new] = attrs[old]
        fields = {fl.name for fl in dataclasses.fields(Config)}
        # every model field is carried; the rest of /config is derived (rope_layout) or an older file's run state
        ignored = sorted(k for k in attrs if k not in fields and k not in DERIVED_ATTRS and k not in LEGACY_RUN_ATTRS)
        if ignored:
            print(f"{path}: warning: /config attributes the reference model does not know: {', '.join(ignored)}",
                  file=sys.stderr)
        known = POS_ENCODINGS + tuple(ROPE_AXES)
        foreign = attrs.get("pos_encoding") if attrs.get("pos_encoding") not in known else None
        if foreign:
            print(f"{path}: warning: pos_encoding {foreign!r} is not an encoding of the PyTorch reference model "
                  f"(tools/ref_model.py has {', '.join(known)}): loading it without a position encoding",
                  file=sys.stderr)
            attrs["pos_encoding"] = "none"
        cfg = Config(**{k: v for k, v in attrs.items() if k in fields})
        state = {name: torch.from_numpy(ds[()]) for name, ds in f["params"].items()}
    # ropegrad stores 0-d parameters (FIRE's c and L_multiplier) as [1]: take the model's shape when only that differs
    shapes = {n: p.shape for n, p in Model(cfg).named_parameters()}
    state = {n: (t.reshape(shapes[n]) if n in shapes and t.shape != shapes[n] and t.numel() == shapes[n].numel()
                 else t) for n, t in state.items()}
    return cfg, state, run, foreign


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--logits", help="HDF5 file with /tokens and /logits written by the C forward")
    ap.add_argument("--out", help="write the state_dict here (torch.save)")
    args = ap.parse_args()

    cfg, state, _, foreign = read_checkpoint(args.checkpoint)
    model = Model(cfg)
    own = set(model.state_dict())
    extra = {n: t for n, t in state.items() if n not in own}
    if foreign or extra:
        missing = sorted(own - set(state))
        if missing:
            raise SystemExit(f"{args.checkpoint}: /params lacks tensors of the reference model: {', '.join(missing)}")
        print(f"{args.checkpoint}: the PyTorch reference model lacks {len(extra)} parameters of encoding "
              f"{foreign or cfg.pos_encoding!r}, carried under their names: {', '.join(sorted(extra))}")
        model.load_state_dict({n: t for n, t in state.items() if n in own}, strict=True)
    else:
        model.load_state_dict(state, strict=True)
    model.eval()
    n = sum(p.numel() for p in model.parameters())
    print(f"{args.checkpoint}: pos_encoding={foreign or cfg.pos_encoding} rope_theta={cfg.rope_theta} "
          f"rope_scaling={cfg.rope_scaling} layers={cfg.n_layers} d_model={cfg.d_model}: {len(state)} tensors, "
          f"{n} parameters loaded")
    if args.out:
        torch.save({**model.state_dict(), **extra}, args.out)
    if args.logits and (foreign or extra):
        print(f"  logits: not compared (the reference model lacks the encoding {foreign or cfg.pos_encoding!r})")
        return 1
    if args.logits:
        with h5py.File(args.logits, "r") as f:
            tokens = torch.from_numpy(f["tokens"][()].astype(np.int64))
            want = torch.from_numpy(f["logits"][()].astype(np.float64))
        with torch.no_grad():
            got32 = model(tokens).double()
            got64 = model.double()(tokens)
        d32 = (got32 - want).abs().max().item()
        d64 = (got64 - want).abs().max().item()
        print(f"  logits {tuple(want.shape)}: max |torch float32 - C| = {d32:.3g}, "
              f"max |torch float64 - C| = {d64:.3g}, max |logit| = {want.abs().max().item():.3g}")
        return 0 if d64 < 1e-4 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
