/* pos.c: the registry of position encodings (one descriptor per encoding, each exported by its own file; the
 * built-ins are registered in rg_pos_kind order before the first lookup, a program's own ones by rg_pos_register),
 * the encodings' settings in a model config, the per-forward position summary, and randomized positions. Adding a
 * built-in: one new file with its descriptor, one rg_pos_kind value and one row of BUILTINS below; adding an
 * encoding of one's own: rg_pos_register (docs/extending.md, "A new position encoding").
 *
 * Randomized positions: Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of
 * Transformers" (ACL), sec. 3: during training each sequence of length T takes the positions of a sorted uniformly
 * random subset of size T of [0, L) with L larger than any test length; at evaluation positions are 0..T-1.
 * The subset is drawn with selection sampling (Knuth, TAOCP vol. 2, 3.4.2, Algorithm S), which emits it sorted.
 */
#include "pos.h"
#include "nn.h"
#include "pos_grid_bias.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NoPE: no position signal, every hook absent. */
/* The report's note: nothing to set. */
static void none_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    snprintf(buf, cap, "none: no position information (causal mask only)");
}

const rg_pos_encoding rg_pos_enc_none = {.name = "none", .doc = "NoPE: no position signal (Kazemnejad et al. 2023)",
                                         .flags = RG_POS_POSITIONLESS | RG_POS_RELATIVE, .report_note = none_note,
                                         .note_order = 8,
                                         .plot_colour = "#000000", .plot_marker = 7};

static const rg_pos_encoding *const BUILTINS[RG_POS_BUILTIN_COUNT] = {
    [RG_POS_NONE] = &rg_pos_enc_none,
    [RG_POS_SINUSOIDAL] = &rg_pos_enc_sinusoidal,
    [RG_POS_LEARNED] = &rg_pos_enc_learned,
    [RG_POS_T5] = &rg_pos_enc_t5,
    [RG_POS_XL] = &rg_pos_enc_xl,
    [RG_POS_ALIBI] = &rg_pos_enc_alibi,
    [RG_POS_ROPE] = &rg_pos_enc_rope,
    [RG_POS_ROPE_HALF] = &rg_pos_enc_rope_half,
    [RG_POS_FIRE] = &rg_pos_enc_fire,
    [RG_POS_KERPLE_LOG] = &rg_pos_enc_kerple_log,
    [RG_POS_KERPLE_POWER] = &rg_pos_enc_kerple_power,
    [RG_POS_ROPE_2D] = &rg_pos_enc_rope_2d,
    [RG_POS_ROPE_2D_PIXTRAL] = &rg_pos_enc_rope_2d_pixtral,
    [RG_POS_MROPE] = &rg_pos_enc_mrope,
    [RG_POS_LEARNED_2D] = &rg_pos_enc_learned_2d,
    [RG_POS_SINUSOIDAL_2D] = &rg_pos_enc_sinusoidal_2d,
    [RG_POS_ALIBI_2D_MANHATTAN] = &rg_pos_enc_alibi_2d_manhattan,
    [RG_POS_ALIBI_2D_EUCLIDEAN] = &rg_pos_enc_alibi_2d_euclidean,
    [RG_POS_T5_2D] = &rg_pos_enc_t5_2d,
};

static const rg_pos_encoding *reg[RG_POS_MAX];
static int n_reg;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

/* encodings: [a-z0-9_-]; settings: [A-Za-z0-9_] (FIRE's fire_init_L); non-empty, shorter than RG_POS_NAME_MAX */
static bool valid_name(const char *s, bool encoding)
{
    if (!s || !s[0] || strlen(s) >= RG_POS_NAME_MAX) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || (encoding && *s == '-') ||
              (!encoding && *s >= 'A' && *s <= 'Z')))
            return false;
    return true;
}

static const rg_pos_setting *find_setting(const char *name)
{
    for (int i = 0; i < n_reg; i++)
        for (int j = 0; j < reg[i]->n_settings; j++)
            if (strcmp(reg[i]->settings[j].name, name) == 0) return &reg[i]->settings[j];
    return NULL;
}

static rg_status check_setting(const rg_pos_encoding *enc, int j)
{
    const rg_pos_setting *d = &enc->settings[j];
    if (!valid_name(d->name, false))
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': setting %d has no valid name ([A-Za-z0-9_], shorter "
                        "than %d)", enc->name, j, RG_POS_NAME_MAX);
    bool is_int = d->type == RG_POS_SETTING_INT;
    if ((!is_int && d->type != RG_POS_SETTING_DOUBLE) || !isfinite(d->lo) || !isfinite(d->hi) ||
        !(d->lo <= d->def && d->def <= d->hi) ||
        (is_int && (d->lo != floor(d->lo) || d->hi != floor(d->hi) || d->def != floor(d->def) ||
                    d->lo < -2147483647.0 || d->hi > 2147483647.0)))
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': setting %s: default %g must lie in the finite limits "
                        "[%g, %g] (integral ones within int32 for an INT setting)", enc->name, d->name, d->def, d->lo,
                        d->hi);
    for (int k = 0; k < j; k++)
        if (strcmp(enc->settings[k].name, d->name) == 0)
            return rg_error(RG_ERR_ARG, "rg_pos_register '%s': setting %s is declared twice", enc->name, d->name);
    const rg_pos_setting *o = find_setting(d->name);
    if (o && (o->type != d->type || o->def != d->def || o->lo != d->lo || o->hi != d->hi))
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': setting %s is declared differently by another registered "
                        "encoding", enc->name, d->name);
    return RG_OK;
}

/* The capability fields a program reads: a max_distance_setting among the encoding's INT settings, a plot colour
 * "#RRGGBB" with a gnuplot point type 1..15 (or neither). */
static rg_status check_capabilities(const rg_pos_encoding *enc)
{
    const char *m = enc->max_distance_setting;
    bool found = !m;
    for (int j = 0; m && j < enc->n_settings; j++)
        found |= strcmp(enc->settings[j].name, m) == 0 && enc->settings[j].type == RG_POS_SETTING_INT;
    if (!found)
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': max_distance_setting %s is not one of its INT settings",
                        enc->name, m);
    const char *c = enc->plot_colour;
    bool hex = c && strlen(c) == 7 && c[0] == '#' && strspn(c + 1, "0123456789abcdefABCDEF") == 6;
    if ((c && !hex) || (c ? enc->plot_marker < 1 || enc->plot_marker > 15 : enc->plot_marker != 0))
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': plot_colour must be \"#RRGGBB\" with a plot_marker of "
                        "1..15, or NULL with 0", enc->name);
    return RG_OK;
}

static rg_status add(const rg_pos_encoding *enc, rg_pos_kind *id)
{
    if (!enc || !valid_name(enc->name, true))
        return rg_error(RG_ERR_ARG, "rg_pos_register: an encoding needs a name of [a-z0-9_-], shorter than %d "
                        "characters", RG_POS_NAME_MAX);
    for (int i = 0; i < n_reg; i++)
        if (strcmp(reg[i]->name, enc->name) == 0)
            return rg_error(RG_ERR_ARG, "rg_pos_register: an encoding named '%s' is registered already", enc->name);
    if (n_reg == RG_POS_MAX)
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': the registry is full (%d encodings)", enc->name,
                        RG_POS_MAX);
    if (enc->n_settings < 0 || enc->n_settings > RG_POS_SETTINGS_MAX || (enc->n_settings && !enc->settings))
        return rg_error(RG_ERR_ARG, "rg_pos_register '%s': %d settings (0 to %d, with the array)", enc->name,
                        enc->n_settings, RG_POS_SETTINGS_MAX);
    for (int j = 0; j < enc->n_settings; j++) {
        rg_status st = check_setting(enc, j);
        if (st) return st;
    }
    rg_status st = check_capabilities(enc);
    if (st) return st;
    if (id) *id = (rg_pos_kind)n_reg;
    reg[n_reg++] = enc;
    return RG_OK;
}

static void register_builtins(void)
{
    for (int i = 0; i < RG_POS_BUILTIN_COUNT; i++) {
        rg_pos_kind id;
        rg_status st = add(BUILTINS[i], &id);
        RG_ASSERT(st == RG_OK && (int)id == i, "built-in encoding %d: %s", i, rg_last_error());
    }
}

rg_status rg_pos_register(const rg_pos_encoding *enc, rg_pos_kind *id)
{
    pthread_once(&builtins_once, register_builtins);
    return add(enc, id);
}

int rg_pos_count(void)
{
    pthread_once(&builtins_once, register_builtins);
    return n_reg;
}

const rg_pos_encoding *rg_pos_encoding_of(rg_pos_kind k)
{
    return (unsigned)k < (unsigned)rg_pos_count() ? reg[k] : NULL;
}

const char *rg_pos_name(rg_pos_kind k)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(k);
    return e ? e->name : "?";
}

rg_status rg_pos_parse(const char *name, rg_pos_kind *out)
{
    char allowed[RG_POS_MAX * (RG_POS_NAME_MAX + 2)] = "";
    int n = rg_pos_count();
    for (int i = 0; i < n; i++) {
        if (strcmp(name, reg[i]->name) == 0) { *out = (rg_pos_kind)i; return RG_OK; }
        if (i) strcat(allowed, ", ");
        strcat(allowed, reg[i]->name);
    }
    return rg_error(RG_ERR_ARG, "unknown position encoding '%s' (registered: %s; a program's own encoding must be "
                    "registered with rg_pos_register() before its name is parsed or its checkpoint loaded)", name,
                    allowed);
}

const rg_pos_setting *rg_pos_setting_find(const char *name)
{
    pthread_once(&builtins_once, register_builtins);
    return name ? find_setting(name) : NULL;
}

/* ------------------------------------------------------------------ settings in a config */

static int value_index(const rg_model_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->n_pos_values && i < RG_POS_VALUES_MAX; i++)
        if (strcmp(cfg->pos_values[i].name, name) == 0) return i;
    return -1;
}

double rg_pos_config_get(const rg_model_config *cfg, const char *name)
{
    int i = value_index(cfg, name);
    if (i >= 0) return cfg->pos_values[i].value;
    const rg_pos_setting *d = rg_pos_setting_find(name);
    RG_ASSERT(d, "rg_pos_config_get: no registered encoding declares the setting '%s'", name);
    return d->def;
}

/* The first registered encoding declaring setting name (two may share one: the kerple variants' kerple_eps). */
static int first_declarer(const char *name)
{
    for (int i = 0; i < n_reg; i++)
        for (int j = 0; j < reg[i]->n_settings; j++)
            if (strcmp(reg[i]->settings[j].name, name) == 0) return i;
    return -1;
}

/* RG_ERR_ARG unless v fits the declaration of name */
static rg_status check_value(const char *name, double v)
{
    const rg_pos_setting *d = rg_pos_setting_find(name);
    if (!d) {
        char known[RG_POS_MAX * 2 * RG_POS_NAME_MAX] = "";
        for (int i = 0; i < n_reg; i++)
            for (int j = 0; j < reg[i]->n_settings; j++)
                if (first_declarer(reg[i]->settings[j].name) == i && strlen(known) + RG_POS_NAME_MAX + 2 < sizeof known)
                    strcat(strcat(known, known[0] ? ", " : ""), reg[i]->settings[j].name);
        return rg_error(RG_ERR_ARG, "config: unknown encoding setting '%s' (declared: %s)", name, known);
    }
    if (!(v >= d->lo && v <= d->hi) || (d->type == RG_POS_SETTING_INT && v != floor(v)))
        return rg_error(RG_ERR_ARG, "config: %s = %.17g must be %s in [%g, %g] (%s)", name, v,
                        d->type == RG_POS_SETTING_INT ? "an integer" : "a number", d->lo, d->hi, d->doc);
    return RG_OK;
}

rg_status rg_pos_config_set(rg_model_config *cfg, const char *name, double v)
{
    rg_status st = check_value(name, v);
    if (st) return st;
    int i = value_index(cfg, name);
    if (i < 0) {
        if (cfg->n_pos_values >= RG_POS_VALUES_MAX)
            return rg_error(RG_ERR_ARG, "config: %s: a config holds at most %d encoding settings", name,
                            RG_POS_VALUES_MAX);
        i = cfg->n_pos_values++;
        snprintf(cfg->pos_values[i].name, RG_POS_NAME_MAX, "%s", name);
    }
    cfg->pos_values[i].value = v;
    return RG_OK;
}

rg_status rg_pos_config_set_text(rg_model_config *cfg, const char *text)
{
    const char *eq = strchr(text, '=');
    char name[RG_POS_NAME_MAX], *end;
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof name)
        return rg_error(RG_ERR_ARG, "config: '%s' is not NAME=VALUE with a setting name", text);
    memcpy(name, text, (size_t)(eq - text));
    name[eq - text] = 0;
    errno = 0;
    double v = strtod(eq + 1, &end);
    if (errno || end == eq + 1 || *end)
        return rg_error(RG_ERR_ARG, "config: %s: '%s' is not a number", name, eq + 1);
    return rg_pos_config_set(cfg, name, v);
}

rg_status rg_pos_config_check(const rg_model_config *cfg)
{
    const rg_pos_encoding *enc = rg_pos_encoding_of(cfg->pos);
    if (!enc) return rg_error(RG_ERR_ARG, "config: unknown position encoding id %d", (int)cfg->pos);
    if (cfg->n_pos_values < 0 || cfg->n_pos_values > RG_POS_VALUES_MAX)
        return rg_error(RG_ERR_ARG, "config: %d encoding settings (at most %d)", cfg->n_pos_values,
                        RG_POS_VALUES_MAX);
    for (int i = 0; i < cfg->n_pos_values; i++) {
        const rg_pos_value *v = &cfg->pos_values[i];
        if (!memchr(v->name, 0, sizeof v->name))
            return rg_error(RG_ERR_ARG, "config: encoding setting %d has no terminated name", i);
        rg_status st = check_value(v->name, v->value);
        if (st) return st;
        if (value_index(cfg, v->name) != i)
            return rg_error(RG_ERR_ARG, "config: encoding setting %s is given twice", v->name);
    }
    return enc->validate ? enc->validate(cfg) : RG_OK;
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
    rg_pos_summarize_axes(s, q_pos, k_pos, NULL, NULL, B, T, S);
}

void rg_pos_summarize_axes(rg_pos_summary *s, const int32_t *q_pos, const int32_t *k_pos, const int32_t *q_axes,
                           const int32_t *k_axes, int B, int T, int S)
{
    RG_ASSERT(B >= 1 && T >= 1 && S >= 1, "rg_pos_summarize: B %d, T %d, S %d", B, T, S);
    RG_ASSERT(!q_axes == !k_axes, "rg_pos_summarize_axes: query and key axes must be both given or both NULL");
    *s = (rg_pos_summary){.q_pos = q_pos, .k_pos = k_pos, .B = B, .T = T, .S = S, .rows_shared = true,
                          .q_axes = q_axes, .k_axes = k_axes};
    scan(q_pos, B, T, &s->q_min, &s->q_max, &s->rows_shared);
    if (k_pos == q_pos && S == T) {
        s->k_min = s->q_min;
        s->k_max = s->q_max;
    } else {
        scan(k_pos, B, S, &s->k_min, &s->k_max, &s->rows_shared);
    }
    for (int a = 0; a < RG_POS_AXES; a++) {
        if (!q_axes) {
            s->q_axis_min[a] = s->q_min, s->q_axis_max[a] = s->q_max;
            s->k_axis_min[a] = s->k_min, s->k_axis_max[a] = s->k_max;
            continue;
        }
        scan(rg_pos_q_axis(s, a), B, T, &s->q_axis_min[a], &s->q_axis_max[a], &s->rows_shared);
        scan(rg_pos_k_axis(s, a), B, S, &s->k_axis_min[a], &s->k_axis_max[a], &s->rows_shared);
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
