/* settings.c: the table of train_order's options. One row per option gives its flag (--name), its JSON key in
 * --config files and --print-config (the name with '_' for '-'), its key in the checkpoint's /run group (if a
 * resume must reuse it), its type and limits, and the modes it applies to. Parsing the command line, reading a
 * --config file, printing the resolved settings, and writing / reading / validating the /run group are each one
 * loop over this table, so a flag, a config key and a checkpoint value of the same setting share one set of
 * limits. */
#include "engine/settings/settings.h"
#include "engine/base/files.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/results/results.h"
#include "engine/settings/lists.h"
#include "engine/settings/plugin_load.h"
#include "engine/settings/protocol.h"
#include "engine/settings/option_table.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F(field) offsetof(to_options, field)

/* ------------------------------------------------------------------ the table */

#define INT(n, md, r, f, lo, hi, a, h) {n, K_INT, md, r, F(f), lo, hi, false, NULL, NULL, a, h, NULL, NULL}
#define DBL(n, md, f, lo, open, hi, h) {n, K_DOUBLE, md, false, F(f), lo, hi, open, NULL, NULL, "X", h, NULL, NULL}
#define BOOL(n, md, r, f, h) {n, K_BOOL, md, r, F(f), 0, 1, false, NULL, NULL, NULL, h, NULL, NULL}
#define PATH(n, md, f, a, h) {n, K_PATH, md, false, F(f), 1, TO_PATH - 1, false, NULL, NULL, a, h, NULL, NULL}
/* a value stored in /run that has no flag of its own (the key names it) */
#define HIDDEN(k, f, lo, hi) {NULL, K_INT, M_ANY, true, F(f), lo, hi, false, NULL, NULL, NULL, NULL, NULL, k}
#define LIST(n, md, r, p, pr, a, h, al) {n, K_LIST, md, r, 0, 0, 0, false, p, pr, a, h, al, NULL}
#define ACTION(n, a, h) {n, K_ACTION, M_ANY, false, 0, 0, 0, false, NULL, NULL, a, h, NULL, NULL}

/* --precision fp32 | bf16 (rg_set_linear_precision; engine.c applies it before any run) */
static int parse_precision(to_options *o, char *v)
{
    if (strcmp(v, "fp32") && strcmp(v, "bf16")) return -1;
    o->precision = strcmp(v, "bf16") ? RG_PRECISION_FP32 : RG_PRECISION_BF16;
    return 0;
}
static void print_precision(const to_options *o, char *b, size_t n) { snprintf(b, n, "%s", rg_precision_name(o->precision)); }

/* --rope-angles fp32 | bf16 (rg_model_config.rope_bf16_angles; a checkpoint keeps it in /config) */
static int parse_rope_angles(to_options *o, char *v)
{
    if (strcmp(v, "fp32") && strcmp(v, "bf16")) return -1;
    o->model.rope_bf16_angles = strcmp(v, "bf16") == 0;
    return 0;
}
static void print_rope_angles(const to_options *o, char *b, size_t n) { snprintf(b, n, "%s", o->model.rope_bf16_angles ? "bf16" : "fp32"); }

static const setting table[] = {
    PATH("config", M_ANY, config, "FILE",
         "read settings from a JSON file (keys as --print-config writes them); flags win"),
    LIST("task", M_NEW, true, to_parse_task, to_print_task, "T", "copy | reverse | sort | all, or a comma list",
         "copy, reverse, sort, all, or a comma list of them"),
    LIST("pos", M_NEW, false, to_parse_pos, to_print_pos, "LIST",
         "position encodings: none, sinusoidal, learned, t5, xl, alibi, rope,\n"
         "                         rope-half, fire, kerple-log, kerple-power, a registered one; or all",
         "registered encoding names (none, sinusoidal, learned, t5, xl, alibi, rope, rope-half, fire, kerple-log, "
         "kerple-power, and a program's own), all, or a comma list"),
    LIST("pos-config", M_NEW, false, to_parse_pos_config, to_print_pos_config, "LIST",
         "the encodings' own settings NAME=VALUE, comma-separated (t5_num_buckets,\n"
         "                         t5_max_distance: the task's longest training distance unless given, fire_*,\n"
         "                         kerple_eps, a registered encoding's)",
         "NAME=VALUE items, comma-separated, NAME a setting a registered encoding declares, VALUE within its limits"),
    LIST("seed", M_NEW, false, to_parse_seed, to_print_seeds, "S", "one seed S", "an integer from 1 to 1000000"),
    LIST("seeds", M_NEW, false, to_parse_seeds, to_print_seeds, "N|LIST", "seeds 1..N, or a comma list of seeds",
         "N from 1 to 1000, or a comma list of distinct seeds from 1 to 1000000"),
    INT("steps", M_TRAIN, true, steps, 1, TO_MAX_STEPS, "N", "training steps (with --resume: the new total)"),
    INT("batch", M_NEW, true, batch, 1, 65536, "N", "batch size"),
    DBL("lr", M_NEW, lr, 0, true, 10, "peak AdamW learning rate"),
    INT("warmup", M_NEW, false, warmup, 0, TO_MAX_STEPS, "N", "linear warmup steps (then cosine decay)"),
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
    INT("max-len", M_NEW, false, model.max_len, 1, 65536, "N", "rows of the learned position table"),
    DBL("rope-theta", M_NEW, model.rope_base, 1, true, 1e9, "RoPE base theta"),
    LIST("rope-angles", M_NEW, false, parse_rope_angles, print_rope_angles, "P",
         "RoPE's angles and cos/sin tables: fp32 (HF's choice), or bf16 as torch.autocast\n"
         "                         computed them (an ablation; the variant bf16angles; docs/precision.md)", "fp32, bf16"),
    BOOL("random-positions", M_NEW, true, random_positions,
         "train on sorted random positions from [0, --max-position) (Ruoss et al. 2023)"),
    INT("max-position", M_NEW, true, max_position, 1, RG_MAX_POSITION, "N",
        "random positions are drawn from [0, N) (default: --max-len; learned: N <= --max-len)"),
    INT("micro-batches", M_NEW, true, micro_batches, 1, TO_MAX_MICRO, "K",
        "length-sorted micro-batches per batch (same samples and loss, less padding)"),
    INT("ckpt-every", M_TRAIN, true, ckpt_every, 1, TO_MAX_STEPS, "N", "steps between checkpoints (and the last)"),
    INT("log-every", M_TRAIN, true, log_every, 1, TO_MAX_STEPS, "N", "steps between rows of runs/<run>/train.csv"),
    INT("eval-every", M_TRAIN, false, eval_every, 0, TO_MAX_STEPS, "E",
        "steps between held-out exact-match measurements at n <= train_len\n"
        "                         (runs/<run>/eval.csv; the report's steps to 0.99); 0: none"),
    INT("extrap-every", M_TRAIN, false, extrap_every, 0, TO_MAX_STEPS, "E",
        "steps between measurements of exact match and token accuracy at every test\n"
        "                         length on the first 32 samples of each evaluation set (runs/<run>/extrap.csv;\n"
        "                         the report's curves over training); 0: none"),
    LIST("lr-schedule", M_RESUME, false, to_parse_lr_schedule, to_print_lr_schedule, "MODE",
         "with --resume: continue (the checkpoint's schedule; past its end, the final\n"
         "                         rate) or restart (a new warmup + cosine from the resume step to --steps)",
         "continue, restart"),
    LIST("test-lens", M_ANY, false, to_parse_test_lens, to_print_test_lens, "LIST",
         "comma list of test n (lengths missing from the data file are generated; default:\n"
         "                         L/2, L, every n from L+1 to 1.5 L, 2L, 3L, 4L for L = --train-len; a grid\n"
         "                         task's sizes HxW: default every H, W in {H/2, H, H+1, 1.5 H, 2 H} of --train-len)",
         "a comma list of up to 32 distinct lengths from 1 to 999 or grid sizes HxW / FxHxW"),
    LIST("rope-scaling", M_ANY, false, to_parse_rope_ext, to_print_rope_ext, "LIST",
         "RoPE rows evaluated with HF rope_type TYPE[:FACTOR] each (linear or pi, ntk,\n"
         "                         dynamic, yarn, llama3 | all | none): TYPE alone scales each test length by\n"
         "                         s = (2n+3)/(2 train_len+3) (none at n <= train_len); TYPE:FACTOR fixes the\n"
         "                         factor for every length, as an HF config does",
         "TYPE or TYPE:FACTOR (TYPE linear, pi, ntk, dynamic, yarn, llama3; FACTOR in [1, 1000]), comma-separated, "
         "each once; all; none"),
    LIST("rope-ext", M_ANY, false, to_parse_rope_ext, to_print_rope_ext, "LIST", "the older name of --rope-scaling",
         "TYPE or TYPE:FACTOR (TYPE linear, pi, ntk, dynamic, yarn, llama3; FACTOR in [1, 1000]), comma-separated, "
         "each once; all; none"),
    LIST("variants", M_NEW, false, to_parse_variants, to_print_variants, "LIST",
         "training variants: base (the encoding), theta500k (the rotary encodings: rope,\n"
         "                         rope-half, mrope, a registered one, with rope_theta 500000), rand (randomized\n"
         "                         positions, every encoding but none), t5max128 (t5 with max_distance 128),\n"
         "                         bf16angles (the rotary ones with bf16 angles and tables, --rope-angles bf16) | all",
         "base, theta500k, rand, t5max128, bf16angles (each once), or all"),
    INT("threads", M_ANY, false, threads, 1, 256, "N", "threads per run (OpenBLAS's and ropegrad's pool)"),
    INT("jobs", M_ANY, false, jobs, 1, 256, "N", "runs in parallel (default: online CPUs)"),
    LIST("precision", M_TRAIN, false, parse_precision, print_precision, "P",
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
         "                         started; the same report as an uninterrupted invocation (only --jobs and\n"
         "                         --quiet may be given with it)"),
    PATH("replot", M_TOOL, replot, "CSV",
         "re-draw the plots of a report.csv into --out (default: the CSV's folder), no training"),
    PATH("compare", M_TOOL, compare[0], "A B",
         "print two reports (report.csv or report.json) side by side, cell by cell"),
    PATH("combine", M_TOOL, combine, "LIST",
         "one report in --out from a comma list of reports of one grid run in blocks of seeds, tasks or encodings "
         "(every other setting checked equal)"),
    LIST("plugin", M_ANY, false, to_parse_plugin, to_print_plugin, "PATH",
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
    HIDDEN("lr_start", lr_start, 0, TO_MAX_STEPS),
};
#define N_SETTINGS ((int)(sizeof table / sizeof *table))
/* The key of a row in --config / --print-config JSON and in /run: the flag's name with '_' for '-', or the key of
 * a hidden row. */
const char *to_setting_key(const setting *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s", s->name ? s->name : s->key);
    for (char *p = buf; *p; p++)
        if (*p == '-') *p = '_';
    return buf;
}

static bool given_cli[N_SETTINGS], given_any[N_SETTINGS];

const setting *to_setting_at(int i)
{
    return i >= 0 && i < N_SETTINGS ? &table[i] : NULL;
}

bool to_setting_given(const setting *s)
{
    return given_any[s - table];
}

const setting *to_setting_find(const char *name)
{
    for (int i = 0; i < N_SETTINGS; i++)
        if (table[i].name && strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

static const setting *find_key(const char *key)
{
    char b[64];
    for (int i = 0; i < N_SETTINGS; i++)
        if (table[i].name && strcmp(to_setting_key(&table[i], b, sizeof b), key) == 0) return &table[i];
    return NULL;
}

void to_options_default(to_options *o)
{
    memset(o, 0, sizeof *o);
    o->tasks[0] = true; /* the first registered task: copy */
    char all[] = "all";
    to_parse_pos(o, all); /* the default is --pos all: every encoding but the opt-in ones (the grid encodings) */
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
    o->n_test_lens = to_default_test_lens(o->train_len, o->test_lens); /* again for the final train_len: options.c */
    to_parse_rope_ext(o, (char[]){"all"});
    o->variants[TO_VAR_BASE] = true;
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
    o->max_position = 0; /* --max-len, resolved by to_options_check */
}

/* ------------------------------------------------------------------ setting one value */

static void format_value(const setting *s, const to_options *o, char *b, size_t n)
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

void to_setting_allowed(const setting *s, char *b, size_t n)
{
    if (s->parse == to_parse_task || s->parse == to_parse_pos) to_allowed_names(s->parse == to_parse_task, b, n);
    else if (s->allowed) snprintf(b, n, "%s", s->allowed);
    else if (s->kind == K_INT) snprintf(b, n, "an integer from %.0f to %.0f", s->lo, s->hi);
    else if (s->kind == K_DOUBLE) snprintf(b, n, "a number in %s%g, %g]", s->lo_open ? "(" : "[", s->lo, s->hi);
    else if (s->kind == K_BOOL) snprintf(b, n, "true or false");
    else snprintf(b, n, "a non-empty path of at most %d characters", TO_PATH - 1);
}

/* Checks a number against the row's limits and stores it. 0, or -1 when it is outside them. */
int to_setting_set_number(const setting *s, to_options *o, double v)
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
static void apply(const setting *s, to_options *o, const char *value, const char *origin)
{
    char allowed[1024], buf[8192];
    to_setting_allowed(s, allowed, sizeof allowed);
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
            bad = rg_size_parse(value, &code) || to_setting_set_number(s, o, code);
        else
            bad = errno || end == value || *end || (s->kind == K_INT && !to_is_decimal_int(value)) ||
                  to_setting_set_number(s, o, v);
    } else if (s->kind == K_PATH) {
        size_t len = strlen(value);
        bad = len < 1 || len > TO_PATH - 1;
        if (!bad) memcpy((char *)o + s->off, value, len + 1);
        else if (len) to_usage_error(allowed, "%s: a path of %zu characters is longer than the limit", origin, len);
    } else if (s->kind == K_LIST) {
        bad = strlen(value) >= sizeof buf;
        if (!bad) {
            snprintf(buf, sizeof buf, "%s", value);
            bad = s->parse(o, buf) != 0;
        }
    }
    if (bad && s->kind == K_LIST && s->parse == to_parse_pos_config) /* the library's reason: item and limits */
        to_usage_error(allowed, "%s: '%s' is not valid (%s)", origin, value, rg_last_error());
    if (bad) to_usage_error(allowed, "%s: '%s' is not valid", origin, value ? value : "");
}

/* ------------------------------------------------------------------ --config FILE (JSON) */

static void json_to_text(const cJSON *v, char *b, size_t n, const char *origin)
{
    int len = 0;
    if (cJSON_IsBool(v)) len = snprintf(b, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v)) len = snprintf(b, n, "%.17g", v->valuedouble);
    else if (cJSON_IsString(v)) len = snprintf(b, n, "%s", v->valuestring);
    else if (cJSON_IsArray(v)) {
        b[0] = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsNumber(it) && !cJSON_IsString(it))
                to_usage_error("numbers or strings", "%s: an array item is neither a number nor a string", origin);
            size_t used = strlen(b) + (b[0] ? 1 : 0);
            if (used >= n) len = (int)n; /* no room left: the value is too long (below) */
            else {
                if (b[0]) strcat(b, ",");
                json_to_text(it, b + used, n - used, origin);
                len = (int)strlen(b);
            }
        }
    } else {
        to_usage_error("a number, true/false, a string, or an array", "%s: unsupported JSON value", origin);
    }
    if (len < 0 || (size_t)len >= n) /* never cut a value: a shorter one would be read silently */
        to_usage_error("a value of at most 8191 characters", "%s: the value is too long", origin);
}

/* The byte offset of the first \u0000 escape inside a JSON string of text, or -1: cJSON would end the string
 * there and silently drop the rest ("copy\u0000sort" read as "copy"). */
static long nul_escape(const char *text)
{
    bool in_string = false;
    for (const char *p = text; *p; p++) {
        if (*p == '"') in_string = !in_string;
        else if (in_string && *p == '\\') {
            if (p[1] == 'u' && !strncmp(p + 2, "0000", 4)) return (long)(p - text);
            if (p[1]) p++; /* the escaped character (\" does not end the string, \\ is one backslash) */
        }
    }
    return -1;
}

/* Whether a JSON value has the type a row takes: numbers for numbers, true/false for flags, a string for a path;
 * a list takes a string, a number (seeds: 3) or an array. */
static bool json_type_fits(const setting *s, const cJSON *v)
{
    switch (s->kind) {
    case K_INT:
    case K_DOUBLE: return cJSON_IsNumber(v);
    case K_BOOL: return cJSON_IsBool(v);
    case K_PATH: return cJSON_IsString(v);
    case K_LIST: return cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsArray(v);
    default: return false;
    }
}

/* The settings object of text (a --config file's, or a report's Settings) into o; exits 2 on an invalid one, the
 * message starting with src ("--config FILE"). */
static void config_text(to_options *o, const char *text, const char *src)
{
    const char *end = NULL; /* the whole file is the object: nothing but white space after it */
    cJSON *root = cJSON_ParseWithOpts(text, &end, true);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        to_usage_error("a JSON object of settings", "%s: not a JSON object (syntax error near byte %ld)",
                       src, (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
    }
    const cJSON *item;
    bool seen[N_SETTINGS] = {false};
    cJSON_ArrayForEach(item, root) {
        const setting *s = find_key(item->string);
        if (s && !strcmp(s->name, "seeds") && cJSON_IsArray(item) && cJSON_GetArraySize(item) == 1)
            s = to_setting_find("seed"); /* [5] is the one seed 5, not the seeds 1..5 */
        char origin[TO_PATH + 128], value[8192];
        snprintf(origin, sizeof origin, "%s: %s", src, item->string);
        if (!s || !s->name || s->kind == K_ACTION || s->mode == M_TOOL || !strcmp(s->name, "print-config") ||
            !strcmp(s->name, "config"))
            to_usage_error("the keys --print-config writes", "%s: unknown setting", origin);
        if (seen[s - table]) { /* JSON leaves duplicate names open; one of them would be dropped silently */
            cJSON_Delete(root);
            to_usage_error("each key once", "%s: '%s' is given twice", src, s->name);
        }
        seen[s - table] = true;
        if (!json_type_fits(s, item)) {
            char allowed[1024];
            to_setting_allowed(s, allowed, sizeof allowed);
            cJSON_Delete(root);
            to_usage_error(allowed, "%s: a JSON %s, but --%s takes %s", origin,
                           cJSON_IsString(item) ? "string" : cJSON_IsNumber(item) ? "number" : cJSON_IsBool(item) ?
                           "true/false" : cJSON_IsNull(item) ? "null" : "array or object", s->name,
                           s->kind == K_BOOL ? "true or false" : s->kind == K_PATH ? "a string" :
                           s->kind == K_LIST ? "a string, a number or an array" : "a number");
        }
        json_to_text(item, value, sizeof value, origin);
        apply(s, o, value, origin);
        given_any[s - table] = true;
    }
    cJSON_Delete(root);
    if (seen[to_setting_find("seed") - table] && seen[to_setting_find("seeds") - table])
        to_usage_error("one of seed S and seeds N|LIST", "%s: seed and seeds together", src);
}

static void load_config(to_options *o, const char *path)
{
    FILE *f = to_fopen_read(path);
    if (!f) to_usage_error("a readable JSON file", "--config: cannot read '%s': %s", path, strerror(errno));
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    int read_errno = ferror(f) ? errno : 0; /* a folder: EISDIR */
    bool too_long = !read_errno && !feof(f);
    fclose(f);
    if (read_errno)
        to_usage_error("a readable JSON file", "--config: cannot read '%s': %s", path, strerror(read_errno));
    if (too_long) to_usage_error("a JSON file under 1 MiB", "--config %s: file too long", path);
    text[n] = 0;
    if (n == 0) to_usage_error("a JSON object of settings", "--config %s: empty file (or a pipe with no writer)", path);
    if (strlen(text) != n)
        to_usage_error("a JSON object of settings", "--config %s: a NUL byte at byte %zu", path, strlen(text));
    long nul = nul_escape(text);
    if (nul >= 0) to_usage_error("a JSON object of settings", "--config %s: a \\u0000 escape at byte %ld", path, nul);
    char src[TO_PATH + 16];
    snprintf(src, sizeof src, "--config %s", path);
    config_text(o, text, src);
}

void to_options_apply_config(to_options *o, const char *text, const char *src)
{
    long nul = nul_escape(text);
    if (nul >= 0) to_usage_error("a JSON object of settings", "%s: a \\u0000 escape at byte %ld", src, nul);
    config_text(o, text, src);
}

/* ------------------------------------------------------------------ the command line */

static void usage(FILE *f)
{
    to_options d;
    to_options_default(&d);
    /* the defaults a run uses: an encoding's max distance follows the default task's longest training distance */
    for (int p = 0; p < rg_pos_count(); p++) {
        const char *md = rg_pos_encoding_of((rg_pos_kind)p)->max_distance_setting;
        int dist = rg_task_longest_distance(0, d.train_len);
        if (md && dist >= 0) rg_pos_config_set(&d.model, md, to_fair_max_distance(&d.model, (rg_pos_kind)p, dist));
    }
    fprintf(f, "usage: %s [options]\n"
               "Trains the reference transformer on copy/reverse/sort with n <= --train-len and reports exact-match\n"
               "accuracy at longer test lengths for each position encoding. Option names are exact (no\n"
               "abbreviations). --resume and --eval take the run's settings from the checkpoint: options that set\n"
               "them are refused there; its evaluation settings too, unless given. --continue OUT takes an\n"
               "interrupted invocation up where it stopped, with the settings recorded in OUT.\n\n", to_prog());
    for (int i = 0; i < N_SETTINGS; i++) {
        const setting *s = &table[i];
        if (!s->name) continue;
        char flag[64], def[256] = "";
        snprintf(flag, sizeof flag, "--%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
        if (s->kind == K_INT || s->kind == K_DOUBLE || s->kind == K_LIST || (s->kind == K_PATH && s->off == F(out)))
            format_value(s, &d, def, sizeof def);
        if (!strcmp(s->name, "jobs") || !strcmp(s->name, "seed") || !strcmp(s->name, "max-position")) def[0] = 0;
        fprintf(f, "  %-22s %s%s%s%s\n", flag, s->help, def[0] ? " (default " : "", def, def[0] ? ")" : "");
    }
    to_print_registries(f);
    to_plugins_usage(f);
    fprintf(f, "\nExit status: 0 success; 1 a run or an output failed, or --out is in use by another run of %s (the\n"
               "same command succeeds once that one ends); 2 a bad command line, including an --out holding\n"
               "another invocation's results without --overwrite, or a --continue folder holding a file that\n"
               "cannot be used (named; nothing written).\n", to_prog());
}

/* The option token as typed (argv element), to refuse abbreviations: getopt_long accepts any unique prefix. */
static const char *typed(char **argv, const struct option *lo)
{
    if (lo->has_arg == required_argument && optarg == argv[optind - 1]) return argv[optind - 2];
    return argv[optind - 1];
}

/* One pass over argv; pass 1 handles only --config, pass 2 everything else. */
static void parse_pass(int argc, char **argv, to_options *o, int pass)
{
    static struct option lo[N_SETTINGS + 1];
    int n = 0;
    for (int i = 0; i < N_SETTINGS; i++)
        if (table[i].name) {
            bool has_arg = table[i].kind != K_BOOL && table[i].arg;
            lo[n++] = (struct option){table[i].name, has_arg ? required_argument : no_argument, NULL, 1000 + i};
        }
    lo[n] = (struct option){0, 0, 0, 0};
    optind = 0; /* GNU: reinitialize */
    opterr = 0;
    int ch, idx;
    while ((ch = getopt_long(argc, argv, "+:", lo, &idx)) != -1) {
        if (ch == '?' || ch == ':') {
            const char *tok = argv[optind - 1];
            to_usage_error("see --help", ch == ':' ? "%s: missing value" : "unknown or ambiguous option '%s'", tok);
        }
        ch -= 1000;
        const setting *s = &table[ch];
        const char *tok = typed(argv, &lo[idx]);
        size_t len = strcspn(tok, "=");
        if (len != strlen(s->name) + 2 || strncmp(tok + 2, s->name, len - 2) != 0)
            to_usage_error("the full option name (see --help)", "'%s' is an abbreviation of --%s", tok, s->name);
        bool is_config = !strcmp(s->name, "config");
        if (pass == 1) {
            if (s->off == F(compare[0]) && optind < argc && strncmp(argv[optind], "--", 2)) optind++; /* its B */
            if (is_config && given_cli[ch]) to_usage_error("one --config", "--config given twice");
            if (is_config) { given_cli[ch] = true; apply(s, o, optarg, "--config"); }
            continue;
        }
        if (is_config) continue; /* done in pass 1 */
        if (s->kind == K_ACTION) { usage(stdout); exit(0); } /* --help */
        char origin[80];
        snprintf(origin, sizeof origin, "--%s", s->name);
        if (s->kind == K_BOOL && optarg) to_usage_error("no value", "%s takes no value", origin);
        apply(s, o, s->kind == K_BOOL ? NULL : optarg, origin);
        given_cli[ch] = given_any[ch] = true;
        if (s->off == F(compare[0])) { /* --compare A B: B is the next argument */
            if (optind >= argc || !strncmp(argv[optind], "--", 2))
                to_usage_error("--compare A B (two report files)", "--compare %s: the second report is missing",
                               o->compare[0]);
            apply(s, o, argv[optind], origin);
            memmove(o->compare[1], o->compare[0], TO_PATH);
            apply(s, o, optarg, origin);
            optind++;
        }
    }
    if (optind < argc) to_usage_error("options only (see --help)", "unexpected argument '%s'", argv[optind]);
}

/* Options that do not apply to the mode are errors. */
static void check_modes(to_options *o)
{
    const char *tool = o->replot[0] ? "--replot" : o->compare[0][0] ? "--compare" : o->combine[0] ? "--combine" : NULL;
    for (int i = 0; tool && i < N_SETTINGS; i++) {
        const setting *s = &table[i];
        if (!given_any[i] || !s->name || s->off == F(quiet) ||
            ((s->off == F(out) || s->off == F(overwrite)) && (o->replot[0] || o->combine[0])))
            continue;
        if (s->mode == M_TOOL && !strcmp(tool + 2, s->name)) continue;
        to_usage_error(o->compare[0][0] && !o->replot[0] ? "--quiet with --compare" :
                       "--out DIR, --overwrite and --quiet with --replot or --combine",
                       "--%s does not apply with %s", s->name, tool);
    }
    if (o->combine[0] && !given_any[to_setting_find("out") - table])
        to_usage_error("--combine LIST --out DIR", "--combine: name the folder of the combined report with --out");
    if (o->replot[0] && !given_any[to_setting_find("out") - table]) { /* default: the CSV's own folder */
        to_folder_of(o->replot, o->out, sizeof o->out);
    }
    const char *ck = o->resume[0] ? "--resume" : o->eval[0] ? "--eval" : NULL;
    for (int i = 0; i < N_SETTINGS; i++) {
        const setting *s = &table[i];
        if (!given_any[i] || !s->name) continue;
        if (s->mode == M_NEW && ck)
            to_usage_error("no training or model settings with --resume/--eval (the checkpoint's are used)",
                           "--%s does not apply with %s", s->name, ck);
        if (s->mode == M_TRAIN && o->eval[0])
            to_usage_error("no training settings with --eval", "--%s does not apply with --eval", s->name);
        if (s->mode == M_RESUME && !o->resume[0])
            to_usage_error("--lr-schedule with --resume", "--%s applies only with --resume", s->name);
    }
    if (given_any[to_setting_find("rope-ext") - table] && given_any[to_setting_find("rope-scaling") - table])
        to_usage_error("one of --rope-scaling and --rope-ext (its older name)",
                       "--rope-scaling and --rope-ext together");
    if (given_cli[to_setting_find("seed") - table] && given_cli[to_setting_find("seeds") - table])
        to_usage_error("one of --seed S and --seeds N|LIST", "--seed and --seeds together");
}

void to_options_parse(int argc, char **argv, to_options *o)
{
    memset(given_cli, 0, sizeof given_cli);
    memset(given_any, 0, sizeof given_any);
    parse_pass(argc, argv, o, 1);
    if (o->config[0]) load_config(o, o->config);
    parse_pass(argc, argv, o, 2);
    o->steps_given = given_any[to_setting_find("steps") - table];
    check_modes(o);
}

/* ------------------------------------------------------------------ --print-config */

char *to_options_json(const to_options *o)
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
        const char *p = (const char *)o + s->off;
        char key[64], text[8192];
        to_setting_key(s, key, sizeof key);
        if (!strcmp(s->name, "seed")) cJSON_AddNumberToObject(root, key, o->seed_list[0]);
        else if (s->kind == K_INT) cJSON_AddNumberToObject(root, key, *(const int *)p);
        else if (s->kind == K_DOUBLE) cJSON_AddNumberToObject(root, key, *(const double *)p);
        else if (s->kind == K_BOOL) cJSON_AddBoolToObject(root, key, *(const bool *)p);
        else if (s->kind == K_PATH && !*p) continue;
        else {
            format_value(s, o, text, sizeof text);
            cJSON_AddStringToObject(root, key, text);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

void to_options_print(const to_options *o, FILE *f)
{
    char *text = to_options_json(o);
    fprintf(f, "%s\n", text ? text : "{}");
    cJSON_free(text);
}
