/* pos.c: the table of position encodings (one descriptor per encoding, each exported by its own src/nn/pos_*.c),
 * the names, the per-forward position summary, and randomized positions. Adding an encoding: one new file with
 * its descriptor, one enum value in pos.h and one row below.
 *
 * Randomized positions: Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of
 * Transformers" (ACL), sec. 3: during training each sequence of length T takes the positions of a sorted uniformly
 * random subset of size T of [0, L) with L larger than any test length; at evaluation positions are 0..T-1.
 * The subset is drawn with selection sampling (Knuth, TAOCP vol. 2, 3.4.2, Algorithm S), which emits it sorted.
 */
#include "pos.h"

#include <string.h>

/* NoPE: no position signal, every hook absent. */
static const rg_pos_encoding NONE = {.name = "none"};

static const rg_pos_encoding *const TABLE[RG_POS_COUNT] = {
    [RG_POS_NONE] = &NONE,
    [RG_POS_SINUSOIDAL] = &rg_pos_enc_sinusoidal,
    [RG_POS_LEARNED] = &rg_pos_enc_learned,
    [RG_POS_T5] = &rg_pos_enc_t5,
    [RG_POS_XL] = &rg_pos_enc_xl,
    [RG_POS_ALIBI] = &rg_pos_enc_alibi,
    [RG_POS_ROPE] = &rg_pos_enc_rope,
    [RG_POS_ROPE_HALF] = &rg_pos_enc_rope_half,
    [RG_POS_FIRE] = &rg_pos_enc_fire,
};

const rg_pos_encoding *rg_pos_encoding_of(rg_pos_kind k) { return (unsigned)k < RG_POS_COUNT ? TABLE[k] : NULL; }

const char *rg_pos_name(rg_pos_kind k) { return (unsigned)k < RG_POS_COUNT ? TABLE[k]->name : "?"; }

rg_status rg_pos_parse(const char *name, rg_pos_kind *out)
{
    char allowed[256] = "";
    for (int i = 0; i < RG_POS_COUNT; i++) {
        if (strcmp(name, TABLE[i]->name) == 0) { *out = (rg_pos_kind)i; return RG_OK; }
        if (i) strncat(allowed, ", ", sizeof allowed - strlen(allowed) - 1);
        strncat(allowed, TABLE[i]->name, sizeof allowed - strlen(allowed) - 1);
    }
    return rg_error(RG_ERR_ARG, "unknown position encoding '%s' (allowed: %s)", name, allowed);
}

/* min and max of v [n] and whether its B rows of n / B equal the first */
static void scan(const int32_t *v, int B, int T, int32_t *lo, int32_t *hi, bool *shared)
{
    int32_t a = INT32_MAX, b = INT32_MIN;
    for (int64_t i = 0; i < (int64_t)B * T; i++) {
        if (v[i] < a) a = v[i];
        if (v[i] > b) b = v[i];
    }
    *lo = a;
    *hi = b;
    for (int r = 1; r < B && *shared; r++)
        if (memcmp(v, v + (int64_t)r * T, (size_t)T * sizeof(int32_t))) *shared = false;
}

void rg_pos_summarize(rg_pos_summary *s, const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S)
{
    RG_ASSERT(B >= 1 && T >= 1 && S >= 1, "rg_pos_summarize: B %d, T %d, S %d", B, T, S);
    *s = (rg_pos_summary){.q_pos = q_pos, .k_pos = k_pos, .B = B, .T = T, .S = S, .rows_shared = true};
    scan(q_pos, B, T, &s->q_min, &s->q_max, &s->rows_shared);
    if (k_pos == q_pos && S == T) {
        s->k_min = s->q_min;
        s->k_max = s->q_max;
    } else {
        scan(k_pos, B, S, &s->k_min, &s->k_max, &s->rows_shared);
    }
}

void rg_random_positions(rg_rng *rng, int B, int T, int max_position, int32_t *out)
{
    RG_ASSERT(T >= 0 && T <= max_position, "rg_random_positions: %d positions from [0, %d)", T, max_position);
    for (int b = 0; b < B; b++) {
        int32_t *o = out + (int64_t)b * T;
        int chosen = 0;
        for (int t = 0; t < max_position && chosen < T; t++)
            /* select t with probability (still needed) / (still available) */
            if ((int)rg_rng_below(rng, (uint32_t)(max_position - t)) < T - chosen) o[chosen++] = t;
    }
}
