/* labels.h: the names results are shown under (labels.c): variants, --rope-scaling text, row labels, run names. */
#ifndef ENG_BASE_LABELS_H
#define ENG_BASE_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/base/types.h"

/* Variants and labels (one home for every name a result is shown under). */
const char *eng_variant_name(eng_variant v);               /* "base", "theta500k", "rand": CSV, JSON, file names */
int eng_variant_parse(const char *name, eng_variant *v);   /* 0, or -1 for an unknown name */
/* Whether variant v applies to encoding pos, by its descriptor's capabilities (pos.h): theta500k, bf16angles the
 * rotary encodings (RG_POS_ROTARY); rand every encoding but a POSITIONLESS one; t5max128 an encoding with a
 * max_distance_setting. */
bool eng_variant_applies(eng_variant v, rg_pos_kind pos);
/* A rotary encoding (RG_POS_ROTARY): evaluated with the --rope-scaling rows too. */
bool eng_pos_rotary(rg_pos_kind pos);
/* An encoding with a largest position (a max_position hook: a learned table): an RG_ERR_ARG of its forward at a
 * test length is n/a, not an error. */
bool eng_pos_bounded(rg_pos_kind pos);
/* The variant a run with settings o and encoding pos is (randomized positions win; then rope_theta 500000). */
eng_variant eng_variant_of(const eng_options *o, rg_pos_kind pos);
/* v in the fewest significant digits (at most 17, %g's form) that read back as v with strtod: "0.4", not
 * "0.40000000000000002", and "1.3333333333333333", not %g's "1.33333"; a whole number below 1e15 in its digits
 * ("160", not "1.6e+02", so an integer option reads it). Every number the engine writes as text to be
 * read back (settings, --rope-scaling factors, --pos-config values) goes through it. Returns buf; cap >= 32. */
const char *eng_number_text(double v, char *buf, size_t cap);
/* "yarn" (per test length) or "yarn:4" (fixed factor 4): the rope_ext text of CSV/JSON and --rope-scaling. */
const char *eng_ext_text(rg_rope_ext e, double factor, char *buf, size_t cap);
/* Parses that text (HF names linear/default accepted). 0, or -1 (unknown type, factor outside [1, 1000]). */
int eng_ext_parse(const char *text, rg_rope_ext *e, double *factor);
/* A row's label: "rope", "rope θ=500k", "alibi+rand", "rope+rand+yarn", "rope+yarn:4". */
const char *eng_label(rg_pos_kind pos, eng_variant v, rg_rope_ext e, double factor, char *buf, size_t cap);
/* The run's name in file names: "copy-rope-seed1", "copy-rope-theta500k-seed1", "copy-alibi-rand-seed1"; with a
 * model size (size not NULL nor "": a grid with a size axis) the size before the seed, "copy-alibi-rand-128x4-seed1". */
const char *eng_run_name(rg_task task, rg_pos_kind pos, eng_variant v, const char *size, int seed, char *buf,
                         size_t cap);

#endif
