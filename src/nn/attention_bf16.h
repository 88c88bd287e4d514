/* attention_bf16.h: attention's products in bf16 (attention_bf16.c), called by the op in attention.c. Internal to
 * the library. */
#ifndef RG_ATTENTION_BF16_H
#define RG_ATTENTION_BF16_H

#include "attention_rows.h"

#ifndef RG_DOUBLE
/* The bf16 products (attention_bf16.c): the forward's and the backward's parts of a pool loop over an attn_job,
 * and the batch entries of a tile of nh heads */
void rg_attn_forward_part_bf16(void *p, int part, int nparts);
void rg_attn_backward_part_bf16(void *p, int part, int nparts);
int rg_attn_tile_batch(int nh, int T, int S);
#endif

#endif
