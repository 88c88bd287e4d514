# mk/experiments.mk: the experiment's make targets, each one train_order command (docs/experiment.md). The wall
# times, machines and findings of each are in its results folder (results/README.md). A second invocation on a
# folder holding results is refused; RUN_ARGS=--overwrite writes into it, and RUN_ARGS adds any other option.
.PHONY: run experiment experiment-small experiment-variants experiment-lm experiment-tricks experiment-grids

# The main job (docs/protocol.md; results/make-run/): copy with four encodings that differ in the window
# L+1..1.5L (NoPE, T5 with the fair max_distance, ALiBi, RoPE and RoPE's scaling rows), one seed, the default
# protocol: 10000 steps, test lengths 8,16,17..24,32,48,64, the curves over training every 500 steps; writes
# out/report.md.
run: all
	$(BUILD)/examples/train_order --task copy --pos none,t5,alibi,rope --seeds 1 --out out $(RUN_ARGS)

# The experiment (results/experiment-10seeds/): three tasks, every registered encoding (and RoPE's scaling types at
# evaluation), ten seeds per cell, the default protocol; writes out/experiment/report.md. experiment-small
# (results/experiment-small/) keeps the five encodings the literature ranks (none, t5, alibi, rope, fire) with
# three seeds. experiment-variants (results/variants/) adds the training variants (rope theta=500k, +rand for every
# encoding but none, t5 with max_distance 128, rope / rope-half with bf16 angles) at ten seeds.
experiment: all
	$(BUILD)/examples/train_order --task all --pos all --seeds 10 --out out/experiment $(RUN_ARGS)
experiment-small: all
	$(BUILD)/examples/train_order --task all --pos none,t5,alibi,rope,fire --seeds 3 --out out/experiment-small $(RUN_ARGS)
experiment-variants: all
	$(BUILD)/examples/train_order --task all --pos all --variants all --seeds 10 --out out/experiment-variants $(RUN_ARGS)

# The language-modelling curve (Press et al. 2022 Table 2 protocol, docs/lm.md, results/lm/): train at L = 32 on
# the synthetic language (lm) and on English bytes (lm_en), perplexity at L..8L by chunks and sliding window;
# lm_report.md and lm_ppl_<task>.svg. experiment-tricks: index hints and position coupling against their base tasks
# at the same budget (docs/tricks.md). Both are opt-in tasks (not in --task all).
experiment-lm: all
	$(BUILD)/examples/train_order --task lm,lm_en --pos sinusoidal,learned,rope,t5,alibi,none --seeds 3 --steps 3000 --train-len 32 --out out/experiment-lm $(RUN_ARGS)
experiment-tricks: all
	$(BUILD)/examples/train_order --task copy,copy_coupled,copy_hints,reverse,reverse_coupled,reverse_hints --pos learned,rope,alibi,none --seeds 3 --out out/experiment-tricks $(RUN_ARGS)

# The grid comparison (docs/grids.md, results/grids-3000/): grid_copy and grid_lookup trained on grids up to 4x4,
# tested at 3x3 .. 8x8, 4x8, 8x4, 4x6, 6x4, with NoPE, 1-D RoPE over the raster index, axial 2-D RoPE, M-RoPE and
# the 2-D absolute / bias encodings; two seeds, 3000 steps; writes out/experiment-grids/report.md, heat_<task>.svg,
# cells_<task>.svg.
experiment-grids: all
	$(BUILD)/examples/train_order --task grid_copy,grid_lookup --pos none,rope,rope-2d,rope-2d-pixtral,mrope,learned-2d,alibi-2d-manhattan,t5-2d --seeds 2 --steps 3000 --train-len 4x4 --test-lens 3x3,4x4,5x5,6x6,8x8,4x8,8x4,4x6,6x4 --rope-scaling none --eval-every 250 --out out/experiment-grids $(RUN_ARGS)
