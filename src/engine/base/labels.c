/* labels.c: one home for every name a result is shown under: the training variants' names and labels, the
 * --rope-scaling text, a number written to be read back, a row's label, a run's name in file names, and the
 * encoding capabilities those names and the evaluation rows depend on (rotary, bounded). Settings, runs, tables
 * and plots all name results this way, so it sits at the bottom. */
#include "engine/base/labels.h"
#include "engine/base/types.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The training variants: the name (CSV, JSON, file names), the label's suffix, and the capability of the encoding's
 * descriptor that the variant changes (pos.h): theta500k and bf16angles set RoPE fields of the config, so they
 * apply to the rotary encodings; rand, to every encoding that reads positions; t5max128 sets the encoding's
 * max_distance_setting to ENG_T5_LEGACY_MAX_DISTANCE. */
static const struct { const char *name, *label; } VARIANTS[ENG_VAR_COUNT] = {
    [ENG_VAR_BASE] = {"base", ""}, [ENG_VAR_THETA500K] = {"theta500k", " θ=500k"}, [ENG_VAR_RAND] = {"rand", "+rand"},
    [ENG_VAR_T5MAX128] = {"t5max128", " max_distance=128"}, [ENG_VAR_BF16ANGLES] = {"bf16angles", " bf16 angles"}};


const char *eng_number_text(double v, char *buf, size_t cap)
{
    /* a whole number in its digits: %g's shortest form of 160 is "1.6e+02", which an integer option refuses */
    if (fabs(v) < 1e15 && v == (double)(long long)v) {
        snprintf(buf, cap, "%lld", (long long)v);
        return buf;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

const char *eng_ext_text(rg_rope_ext e, double factor, char *buf, size_t cap)
{
    char num[32];
    if (factor > 0) snprintf(buf, cap, "%s:%s", rg_rope_ext_name(e), eng_number_text(factor, num, sizeof num));
    else snprintf(buf, cap, "%s", rg_rope_ext_name(e));
    return buf;
}

int eng_ext_parse(const char *text, rg_rope_ext *e, double *factor)
{
    char type[32];
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= sizeof type) return -1;
    memcpy(type, text, len);
    type[len] = 0;
    if (rg_rope_ext_parse(type, e)) return -1;
    *factor = 0;
    if (!colon) return 0;
    char *end;
    errno = 0;
    *factor = strtod(colon + 1, &end);
    if (errno || end == colon + 1 || *end || !(*factor >= 1 && *factor <= 1000) || *e == RG_ROPE_EXT_NONE) return -1;
    return 0;
}

const char *eng_variant_name(eng_variant v) { return (unsigned)v < ENG_VAR_COUNT ? VARIANTS[v].name : "?"; }

int eng_variant_parse(const char *name, eng_variant *v)
{
    for (int i = 0; i < ENG_VAR_COUNT; i++)
        if (strcmp(name, VARIANTS[i].name) == 0) { *v = (eng_variant)i; return 0; }
    return -1;
}

bool eng_variant_applies(eng_variant v, rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    if (v == ENG_VAR_BASE) return true;
    if (!e) return false;
    if (v == ENG_VAR_THETA500K || v == ENG_VAR_BF16ANGLES) return e->flags & RG_POS_ROTARY;
    if (v == ENG_VAR_RAND) return !(e->flags & RG_POS_POSITIONLESS); /* +rand of NoPE would be the same model */
    return e->max_distance_setting != NULL;
}

bool eng_pos_rotary(rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    return e && (e->flags & RG_POS_ROTARY);
}

bool eng_pos_bounded(rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    return e && e->max_position;
}

eng_variant eng_variant_of(const eng_options *o, rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    if (o->random_positions && eng_variant_applies(ENG_VAR_RAND, pos)) return ENG_VAR_RAND;
    if (o->model.rope_base == ENG_THETA_500K && eng_variant_applies(ENG_VAR_THETA500K, pos)) return ENG_VAR_THETA500K;
    if (o->model.rope_bf16_angles && eng_variant_applies(ENG_VAR_BF16ANGLES, pos)) return ENG_VAR_BF16ANGLES;
    if (e && e->max_distance_setting &&
        rg_pos_config_get(&o->model, e->max_distance_setting) == ENG_T5_LEGACY_MAX_DISTANCE)
        return ENG_VAR_T5MAX128;
    return ENG_VAR_BASE;
}

const char *eng_label(rg_pos_kind pos, eng_variant v, rg_rope_ext e, double factor, char *buf, size_t cap)
{
    char ext[48] = "";
    if (e != RG_ROPE_EXT_NONE) {
        ext[0] = '+';
        eng_ext_text(e, factor, ext + 1, sizeof ext - 1);
    }
    snprintf(buf, cap, "%s%s%s", rg_pos_name(pos), (unsigned)v < ENG_VAR_COUNT ? VARIANTS[v].label : "", ext);
    return buf;
}

const char *eng_run_name(rg_task task, rg_pos_kind pos, eng_variant v, const char *size, int seed, char *buf,
                         size_t cap)
{
    bool sized = size && *size;
    snprintf(buf, cap, "%s-%s%s%s%s%s-seed%d", rg_task_name(task), rg_pos_name(pos), v ? "-" : "",
             v ? eng_variant_name(v) : "", sized ? "-" : "", sized ? size : "", seed);
    return buf;
}
