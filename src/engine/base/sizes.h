/* sizes.h: a model size's text (sizes.c): "D x L" with optional heads and MLP width, as --sizes takes it and the
 * report names it. */
#ifndef ENG_BASE_SIZES_H
#define ENG_BASE_SIZES_H

#include "engine/base/types.h"

/* Parses one size item "DxL", "DxLhH", "DxLfF" or "DxLhHfF" (decimal digits; d_model D 1..4096, n_layers L 1..64,
 * n_heads H 1..256, d_ff F 1..65536: the limits of --d-model, --n-layers, --n-heads, --d-ff) into *s: the numbers
 * (n_heads and d_ff 0 when not given) and the canonical text (s->text: the numbers without leading zeros). 0, or -1
 * (an empty or malformed item, a number outside its limits or too long); *s is then unspecified. */
int eng_size_parse(const char *text, eng_size *s);
/* Fills the parts an item did not give: n_heads the default heads, d_ff 4 d_model. */
void eng_size_resolve(eng_size *s, int default_heads);
/* The model config cfg with size s's d_model, n_layers, n_heads and d_ff. */
void eng_size_apply(const eng_size *s, rg_model_config *cfg);

#endif
