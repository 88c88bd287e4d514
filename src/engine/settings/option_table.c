/* option_table.c: the table of train_order's options. One row per option gives its flag (--name), its JSON key
 * in --config files and --print-config (the name with '_' for '-'), its key in the checkpoint's /run group (if a
 * resume must reuse it), its type and limits, and the modes it applies to. Parsing the command line
 * (command_line.c), reading a --config file (config.c), printing the resolved settings (here), and writing /
 * reading / validating the /run group (settings_run.c) are each one loop over this table, so a flag, a config key
 * and a checkpoint value of the same setting share one set of limits. */
#include "engine/settings/option_table.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/settings/lists.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F(field) offsetof(eng_options, field)

/* ------------------------------------------------------------------ the table */

#define INT(n, md, r, f, lo, hi, a, h) {n, K_INT, md, r, F(f), lo, hi, false, NULL, NULL, a, h, NULL, NULL}
#define DBL(n, md, f, lo, open, hi, h) {n, K_DOUBLE, md, false, F(f), lo, hi, open, NULL, NULL, "X", h, NULL, NULL}
#define BOOL(n, md, r, f, h) {n, K_BOOL, md, r, F(f), 0, 1, false, NULL, NULL, NULL, h, NULL, NULL}
#define PATH(n, md, f, a, h) {n, K_PATH, md, false, F(f), 1, ENG_PATH - 1, false, NULL, NULL, a, h, NULL, NULL}
/* a value stored in /run that has no flag of its own (the key names it) */
#define HIDDEN(k, f, lo, hi) {NULL, K_INT, M_ANY, true, F(f), lo, hi, false, NULL, NULL, NULL, NULL, NULL, k}
#define LIST(n, md, r, p, pr, a, h, al) {n, K_LIST, md, r, 0, 0, 0, false, p, pr, a, h, al, NULL}
#define ACTION(n, a, h) {n, K_ACTION, M_ANY, false, 0, 0, 0, false, NULL, NULL, a, h, NULL, NULL}

/* --precision fp32 | bf16 (rg_set_linear_precision; engine.c applies it before any run) */
static int parse_precision(eng_options *o, char *v)
{
    if (strcmp(v, "fp32") && strcmp(v, "bf16")) return -1;
    o->precision = strcmp(v, "bf16") ? RG_PRECISION_FP32 : RG_PRECISION_BF16;
    return 0;
}
static void print_precision(const eng_options *o, char *b, size_t n) { snprintf(b, n, "%s", rg_precision_name(o->precision)); }

/* --rope-angles fp32 | bf16 (rg_model_config.rope_bf16_angles; a checkpoint keeps it in /config) */
static int parse_rope_angles(eng_options *o, char *v)
{
    if (strcmp(v, "fp32") && strcmp(v, "bf16")) return -1;
    o->model.rope_bf16_angles = strcmp(v, "bf16") == 0;
    return 0;
}
static void print_rope_angles(const eng_options *o, char *b, size_t n) { snprintf(b, n, "%s", o->model.rope_bf16_angles ? "bf16" : "fp32"); }

static const setting table[] = {
    PATH("config", M_ANY, config, "FILE",
         "read settings from a JSON file (keys as --print-config writes them); flags win"),
    LIST("task", M_NEW, true, eng_parse_task, eng_print_task, "T", "copy | reverse | sort | all, or a comma list",
         "copy, reverse, sort, all, or a comma list of them"),
    LIST("pos", M_NEW, false, eng_parse_pos, eng_print_pos, "LIST",
         "position encodings: none, sinusoidal, learned, t5, xl, alibi, rope,\n"
         "                         rope-half, fire, kerple-log, kerple-power, a registered one; or all",
         "registered encoding names (none, sinusoidal, learned, t5, xl, alibi, rope, rope-half, fire, kerple-log, "
         "kerple-power, and a program's own), all, or a comma list"),
    LIST("pos-config", M_NEW, false, eng_parse_pos_config, eng_print_pos_config, "LIST",
         "the encodings' own settings NAME=VALUE, comma-separated (t5_num_buckets,\n"
         "                         t5_max_distance: the task's longest training distance unless given, fire_*,\n"
         "                         kerple_eps, a registered encoding's)",
         "NAME=VALUE items, comma-separated, NAME a setting a registered encoding declares, VALUE within its limits"),
    LIST("seed", M_NEW, false, eng_parse_seed, eng_print_seeds, "S", "one seed S", "an integer from 1 to 1000000"),
    LIST("seeds", M_NEW, false, eng_parse_seeds, eng_print_seeds, "N|LIST", "seeds 1..N, or a comma list of seeds",
         "N from 1 to 1000, or a comma list of distinct seeds from 1 to 1000000"),
    INT("steps", M_TRAIN, true, steps, 1, ENG_MAX_STEPS, "N", "training steps (with --resume: the new total)"),
    INT("batch", M_NEW, true, batch, 1, 65536, "N", "batch size"),
    DBL("lr", M_NEW, lr, 0, true, 10, "peak AdamW learning rate"),
    INT("warmup", M_NEW, false, warmup, 0, ENG_MAX_STEPS, "N", "linear warmup steps (then cosine decay)"),
    DBL("min-lr-frac", M_NEW, min_lr_frac, 0, false, 1, "final learning rate as a fraction of --lr"),
    DBL("weight-decay", M_NEW, weight_decay, 0, false, 10, "AdamW weight decay"),
    DBL("beta1", M_NEW, beta1, 0, false, 0.999999, "AdamW beta1"),
    DBL("beta2", M_NEW, beta2, 0, false, 0.999999, "AdamW beta2"),
    DBL("eps", M_NEW, eps, 0, true, 1, "AdamW epsilon"),
    DBL("clip", M_NEW, clip, 0, false, 1e6, "max global gradient norm (0: no clipping)"),
    {"train-len", K_INT, M_NEW, true, F(train_len), 1, 1000, false, NULL, NULL, "N|HxW",
     "longest training n (sequences of 2n+3 tokens); a grid task's size HxW or FxHxW (docs/grids.md)",
     "an integer from 1 to 1000, or a grid size HxW / FxHxW (sides 1..9)", NULL},
    INT("d-model", M_NEW, false, model.d_model, 1, 4096, "N", "model width d_model"),
    INT("n-heads", M_NEW, false, model.n_heads, 1, 256, "N", "attention heads (must divide d_model)"),
    INT("n-layers", M_NEW, false, model.n_layers, 1, 64, "N", "transformer blocks"),
    INT("d-ff", M_NEW, false, model.d_ff, 1, 65536, "N", "MLP hidden width d_ff"),
    LIST("sizes", M_NEW, false, eng_parse_sizes, eng_print_sizes, "LIST",
         "model sizes, a comma list of DxL (d_model x n_layers; optionally hH heads, fF\n"
         "                         d_ff: 128x4h8f256; default heads --n-heads, d_ff 4 d_model): a grid axis\n"
         "                         (runs, rows and plots per size); not with --d-model, --n-layers, --d-ff",
         "a comma list of up to 16 distinct sizes DxL, DxLhH, DxLfF or DxLhHfF (d_model 1..4096, n_layers 1..64, "
         "n_heads 1..256 dividing d_model, d_ff 1..65536)"),
    INT("max-len", M_NEW, false, model.max_len, 1, 65536, "N", "rows of the learned position table"),
    DBL("rope-theta", M_NEW, model.rope_base, 1, true, 1e9, "RoPE base theta"),
    LIST("rope-angles", M_NEW, false, parse_rope_angles, print_rope_angles, "P",
         "RoPE's angles and cos/sin tables: fp32 (HF's choice), or bf16 as torch.autocast\n"
         "                         computed them (an ablation; the variant bf16angles; docs/precision.md)", "fp32, bf16"),
    BOOL("random-positions", M_NEW, true, random_positions,
         "train on sorted random positions from [0, --max-position) (Ruoss et al. 2023)"),
    INT("max-position", M_NEW, true, max_position, 1, RG_MAX_POSITION, "N",
        "random positions are drawn from [0, N) (default: --max-len; learned: N <= --max-len)"),
    INT("micro-batches", M_NEW, true, micro_batches, 1, ENG_MAX_MICRO, "K",
        "length-sorted micro-batches per batch (same samples and loss, less padding)"),
    INT("ckpt-every", M_TRAIN, true, ckpt_every, 1, ENG_MAX_STEPS, "N", "steps between checkpoints (and the last)"),
    INT("log-every", M_TRAIN, true, log_every, 1, ENG_MAX_STEPS, "N", "steps between rows of runs/<run>/train.csv"),
    INT("eval-every", M_TRAIN, false, eval_every, 0, ENG_MAX_STEPS, "E",
        "steps between held-out exact-match measurements at n <= train_len\n"
        "                         (runs/<run>/eval.csv; the report's steps to 0.99); 0: none"),
    INT("extrap-every", M_TRAIN, false, extrap_every, 0, ENG_MAX_STEPS, "E",
        "steps between measurements of exact match and token accuracy at every test\n"
        "                         length on the first 32 samples of each evaluation set (runs/<run>/extrap.csv;\n"
        "                         the report's curves over training); 0: none"),
    LIST("lr-schedule", M_RESUME, false, eng_parse_lr_schedule, eng_print_lr_schedule, "MODE",
         "with --resume: continue (the checkpoint's schedule; past its end, the final\n"
         "                         rate) or restart (a new warmup + cosine from the resume step to --steps)",
         "continue, restart"),
    LIST("test-lens", M_ANY, false, eng_parse_test_lens, eng_print_test_lens, "LIST",
         "comma list of test n (lengths missing from the data file are generated; default:\n"
         "                         L/2, L, every n from L+1 to 1.5 L, 2L, 3L, 4L for L = --train-len; a grid\n"
         "                         task's sizes HxW: default every H, W in {H/2, H, H+1, 1.5 H, 2 H} of --train-len)",
         "a comma list of up to 32 distinct lengths from 1 to 999 or grid sizes HxW / FxHxW"),
    LIST("rope-scaling", M_ANY, false, eng_parse_rope_ext, eng_print_rope_ext, "LIST",
         "RoPE rows evaluated with HF rope_type TYPE[:FACTOR] each (linear or pi, ntk,\n"
         "                         dynamic, yarn, llama3 | all | none): TYPE alone scales each test length by\n"
         "                         s = T(n)/T(train_len), T the task's sequence length ((2n+3)/(2 train_len+3)\n"
         "                         for the ordering tasks; none where T(n) <= T(train_len)); TYPE:FACTOR fixes\n"
         "                         the factor for every length, as an HF config does",
         "TYPE or TYPE:FACTOR (TYPE linear, pi, ntk, dynamic, yarn, llama3; FACTOR in [1, 1000]), comma-separated, "
         "each once; all; none"),
    LIST("rope-ext", M_ANY, false, eng_parse_rope_ext, eng_print_rope_ext, "LIST", "the older name of --rope-scaling",
         "TYPE or TYPE:FACTOR (TYPE linear, pi, ntk, dynamic, yarn, llama3; FACTOR in [1, 1000]), comma-separated, "
         "each once; all; none"),
    LIST("variants", M_NEW, false, eng_parse_variants, eng_print_variants, "LIST",
         "training variants: base (the encoding), theta500k (the rotary encodings: rope,\n"
         "                         rope-half, mrope, a registered one, with rope_theta 500000), rand (randomized\n"
         "                         positions, every encoding but none), t5max128 (t5 with max_distance 128),\n"
         "                         bf16angles (the rotary ones with bf16 angles and tables, --rope-angles bf16) | all",
         "base, theta500k, rand, t5max128, bf16angles (each once), or all"),
    INT("threads", M_ANY, false, threads, 1, 256, "N", "threads per run (OpenBLAS's and ropegrad's pool)"),
    INT("jobs", M_ANY, false, jobs, 1, 256, "N", "runs in parallel (default: online CPUs)"),
    LIST("precision", M_ANY, false, parse_precision, print_precision, "P",
         "Linear's and attention's products: fp32, or bf16 operands with float32\n"
         "                         accumulation (oneDNN; AMX or AVX512_BF16 only, refused elsewhere;\n"
         "                         docs/precision.md)", "fp32, bf16"),
    BOOL("data-parallel", M_TRAIN, false, data_parallel,
         "under mpirun: each rank a share of every batch, gradients summed in rank order (docs/mpi.md)"),
    PATH("out", M_ANY, out, "DIR", "output folder (refused if it holds results, unless --overwrite)"),
    BOOL("overwrite", M_ANY, false, overwrite,
         "write into a folder that holds results (and replace a resumed checkpoint)"),
    PATH("data", M_ANY, data, "FILE",
         "evaluation sets (default: data/eval_sets.h5 of the repository, the installed copy, or $ROPEGRAD_DATA)"),
    PATH("resume", M_ANY, resume, "CKPT", "continue a run from its checkpoint to --steps, then evaluate"),
    PATH("eval", M_ANY, eval, "CKPT", "evaluate a saved checkpoint only"),
    PATH("continue", M_ANY, cont, "OUT",
         "continue the interrupted invocation whose --out was OUT, with its settings: finished\n"
         "                         runs kept, unfinished ones resumed from their last checkpoint, the rest\n"
         "                         started; the same report as an uninterrupted invocation (only --jobs,\n"
         "                         --quiet and --plugin, the same builds, may be given with it)"),
    PATH("replot", M_TOOL, replot, "CSV",
         "re-draw the plots of a report.csv into --out (default: the CSV's folder), no training"),
    PATH("compare", M_TOOL, compare[0], "A B",
         "print two reports (report.csv or report.json) side by side, cell by cell"),
    PATH("combine", M_TOOL, combine, "LIST",
         "one report in --out from a comma list of reports of one grid run in blocks of seeds, tasks or encodings "
         "(every other setting checked equal)"),
    LIST("plugin", M_ANY, false, eng_parse_plugin, eng_print_plugin, "PATH",
         "load a plugin (a shared library of encodings and tasks, plugin.h) before the other\n"
         "                         options are read; repeatable; also $ROPEGRAD_PLUGINS, a ':'-separated list",
         "a plugin file loaded by --plugin on the command line or by ROPEGRAD_PLUGINS (a --config file cannot load "
         "one)"),
    PATH("check-pos", M_ANY, check_pos, "NAME",
         "run the conformance check of a registered encoding (gradients, KV cache, checkpoint,\n"
         "                         shift, rope_scaling; docs/extending.md) in this program's precision; no training"),
    BOOL("quiet", M_ANY, false, quiet, "no progress output"),
    BOOL("print-config", M_ANY, false, print_config, "print the resolved settings as JSON and exit"),
    ACTION("help", NULL, "this text"),
    /* not options, stored in /run: the run's seed (one of --seed/--seeds; the task is the --task row, one task), and
     * where the schedule started, so that a resume continues the schedule it was on */
    HIDDEN("seed", seed_list[0], 1, 1000000),
    HIDDEN("lr_start", lr_start, 0, ENG_MAX_STEPS),
};
#define N_SETTINGS ((int)(sizeof table / sizeof *table))
/* The key of a row in --config / --print-config JSON and in /run: the flag's name with '_' for '-', or the key of
 * a hidden row. */
const char *eng_setting_key(const setting *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s", s->name ? s->name : s->key);
    for (char *p = buf; *p; p++)
        if (*p == '-') *p = '_';
    return buf;
}

static bool given_any[N_SETTINGS];
_Static_assert(N_SETTINGS <= ENG_SETTINGS_MAX, "ENG_SETTINGS_MAX: room for every row of the table");

void eng_settings_clear_given(void) { memset(given_any, 0, sizeof given_any); }

int eng_setting_count(void) { return N_SETTINGS; }

int eng_setting_index(const setting *s) { return (int)(s - table); }

void eng_setting_mark_given(const setting *s) { given_any[s - table] = true; }

const setting *eng_setting_at(int i)
{
    return i >= 0 && i < N_SETTINGS ? &table[i] : NULL;
}

bool eng_setting_given(const setting *s)
{
    return given_any[s - table];
}

const setting *eng_setting_find(const char *name)
{
    for (int i = 0; i < N_SETTINGS; i++)
        if (table[i].name && strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

const setting *eng_setting_find_key(const char *key)
{
    char b[64];
    for (int i = 0; i < N_SETTINGS; i++)
        if (table[i].name && strcmp(eng_setting_key(&table[i], b, sizeof b), key) == 0) return &table[i];
    return NULL;
}

void eng_options_default(eng_options *o)
{
    memset(o, 0, sizeof *o);
    o->tasks[0] = true; /* the first registered task: copy */
    char all[] = "all";
    eng_parse_pos(o, all); /* the default is --pos all: every encoding but the opt-in ones (the grid encodings) */
    o->seed_list[0] = 1;
    o->n_seeds = 1;
    o->steps = 10000; /* docs/protocol.md: the budget at which the encodings that learn copy have learned it */
    o->batch = 64;
    o->lr = 1e-3;
    o->train_len = 16;
    o->warmup = 100;
    o->min_lr_frac = 0.1;
    o->weight_decay = 0.01;
    o->clip = 1.0;
    o->beta1 = 0.9;
    o->beta2 = 0.98;
    o->eps = 1e-8;
    o->n_test_lens = eng_default_test_lens(o->train_len, o->test_lens); /* again for the final train_len: options.c */
    eng_parse_rope_ext(o, (char[]){"all"});
    o->variants[ENG_VAR_BASE] = true;
    o->threads = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = ncpu > 0 ? (int)ncpu : 1;
    o->ckpt_every = 1000;
    o->log_every = 10;
    o->eval_every = 100;
    o->extrap_every = 500;
    o->micro_batches = 8;
    snprintf(o->out, sizeof o->out, "out");
    o->model = rg_model_config_default();
    o->max_position = 0; /* --max-len, resolved by eng_options_check */
}

/* ------------------------------------------------------------------ setting one value */

void eng_setting_format(const setting *s, const eng_options *o, char *b, size_t n)
{
    const char *p = (const char *)o + s->off;
    switch (s->kind) {
    case K_INT: snprintf(b, n, "%d", *(const int *)p); break;
    case K_DOUBLE: snprintf(b, n, "%g", *(const double *)p); break;
    case K_BOOL: snprintf(b, n, "%s", *(const bool *)p ? "true" : "false"); break;
    case K_PATH: snprintf(b, n, "%s", p); break;
    case K_LIST: s->print(o, b, n); break;
    default: b[0] = 0;
    }
}

void eng_setting_allowed(const setting *s, char *b, size_t n)
{
    if (s->parse == eng_parse_task || s->parse == eng_parse_pos) eng_allowed_names(s->parse == eng_parse_task, b, n);
    else if (s->allowed) snprintf(b, n, "%s", s->allowed);
    else if (s->kind == K_INT) snprintf(b, n, "an integer from %.0f to %.0f", s->lo, s->hi);
    else if (s->kind == K_DOUBLE) snprintf(b, n, "a number in %s%g, %g]", s->lo_open ? "(" : "[", s->lo, s->hi);
    else if (s->kind == K_BOOL) snprintf(b, n, "true or false");
    else snprintf(b, n, "a non-empty path of at most %d characters", ENG_PATH - 1);
}

/* Checks a number against the row's limits and stores it. 0, or -1 when it is outside them. */
int eng_setting_set_number(const setting *s, eng_options *o, double v)
{
    char *p = (char *)o + s->off;
    if (!isfinite(v) || v < s->lo || (s->lo_open && v == s->lo) || v > s->hi) return -1;
    if (s->kind == K_INT) {
        if (v != floor(v)) return -1;
        *(int *)p = (int)v;
    } else if (s->kind == K_DOUBLE) {
        *(double *)p = v;
    } else if (s->kind == K_BOOL) {
        if (v != 0 && v != 1) return -1;
        *(bool *)p = v != 0;
    } else {
        return -1;
    }
    return 0;
}

/* Applies the text value of one option (NULL: a flag without value, i.e. true). origin names where the value
 * came from, for the message. Exits 2 on a bad value. */
void eng_setting_apply(const setting *s, eng_options *o, const char *value, const char *origin)
{
    char allowed[1024], buf[8192];
    eng_setting_allowed(s, allowed, sizeof allowed);
    int bad = 0;
    if (s->kind == K_BOOL) {
        bad = value && strcmp(value, "true") != 0 && strcmp(value, "false") != 0;
        if (!bad) *(bool *)((char *)o + s->off) = !value || strcmp(value, "true") == 0;
    } else if (s->kind == K_INT || s->kind == K_DOUBLE) {
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        int code;
        if (s->off == F(train_len) && strchr(value, 'x')) /* a grid size HxW / FxHxW: its code (task.h) */
            bad = rg_size_parse(value, &code) || eng_setting_set_number(s, o, code);
        else
            bad = errno || end == value || *end || (s->kind == K_INT && !eng_is_decimal_int(value)) ||
                  eng_setting_set_number(s, o, v);
    } else if (s->kind == K_PATH) {
        size_t len = strlen(value);
        bad = len < 1 || len > ENG_PATH - 1;
        if (!bad) memcpy((char *)o + s->off, value, len + 1);
        else if (len) eng_usage_error(allowed, "%s: a path of %zu characters is longer than the limit", origin, len);
    } else if (s->kind == K_LIST) {
        bad = strlen(value) >= sizeof buf;
        if (!bad) {
            snprintf(buf, sizeof buf, "%s", value);
            bad = s->parse(o, buf) != 0;
        }
    }
    if (bad && s->kind == K_LIST && s->parse == eng_parse_pos_config) /* the library's reason: item and limits */
        eng_usage_error(allowed, "%s: '%s' is not valid (%s)", origin, value, rg_last_error());
    if (bad) eng_usage_error(allowed, "%s: '%s' is not valid", origin, value ? value : "");
}

/* ------------------------------------------------------------------ --print-config */

char *eng_options_json(const eng_options *o)
{
    cJSON *root = cJSON_CreateObject();
    for (int i = 0; i < N_SETTINGS; i++) {
        const setting *s = &table[i];
        if (!s->name || s->kind == K_ACTION || s->mode == M_TOOL || !strcmp(s->name, "print-config") ||
            !strcmp(s->name, "config"))
            continue;
        if (!strcmp(s->name, "seed") && o->n_seeds != 1) continue;
        if (!strcmp(s->name, "seeds") && o->n_seeds == 1) continue;
        if (!strcmp(s->name, "rope-ext")) continue; /* printed as rope_scaling */
        if (!strcmp(s->name, "plugin") || !strcmp(s->name, "check-pos")) continue; /* not settings of a run */
        if (s->mode == M_RESUME && !o->resume[0]) continue; /* not used in this mode */
        if (!strcmp(s->name, "sizes") && !o->n_sizes) continue; /* no size axis: the scalar flags below */
        if (o->n_sizes && (!strcmp(s->name, "d-model") || !strcmp(s->name, "n-layers") || !strcmp(s->name, "d-ff")))
            continue; /* each size has its own (a --config file then reads back without a conflict) */
        const char *p = (const char *)o + s->off;
        char key[64], text[8192];
        eng_setting_key(s, key, sizeof key);
        if (!strcmp(s->name, "seed")) cJSON_AddNumberToObject(root, key, o->seed_list[0]);
        else if (s->kind == K_INT) cJSON_AddNumberToObject(root, key, *(const int *)p);
        else if (s->kind == K_DOUBLE) cJSON_AddNumberToObject(root, key, *(const double *)p);
        else if (s->kind == K_BOOL) cJSON_AddBoolToObject(root, key, *(const bool *)p);
        else if (s->kind == K_PATH && !*p) continue;
        else {
            eng_setting_format(s, o, text, sizeof text);
            cJSON_AddStringToObject(root, key, text);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

void eng_options_print(const eng_options *o, FILE *f)
{
    char *text = eng_options_json(o);
    fprintf(f, "%s\n", text ? text : "{}");
    cJSON_free(text);
}
