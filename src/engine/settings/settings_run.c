/* settings_run.c: the settings a checkpoint carries for train_order. Its /run group holds the rows of the option
 * table (settings.c) marked run: the run's task and seed, train_len, the training settings; a resume or --eval reads
 * them back, with the /optim schedule and the model's /config, each checked against its flag's limits before
 * anything is built from it (a file is user input). */
#include "engine/base/messages.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"
#include "engine/settings/option_table.h"

#include <stdio.h>
#include <string.h>

/* The evaluation settings a checkpoint also keeps in /run, so that --resume and --eval evaluate as the source run
 * did unless the command line or --config gives them (older checkpoints without them: the defaults, said on stderr
 * and in the report). */
/* precision too: a run trained in bf16 is evaluated in bf16 unless the command line says otherwise */
static const char *const EVAL_SETTINGS[] = {"test-lens", "rope-scaling", "eval-every", "extrap-every", "precision"};
#define N_EVAL_SETTINGS ((int)(sizeof EVAL_SETTINGS / sizeof *EVAL_SETTINGS))

/* Where each setting of a --resume / --eval came from, as lists of /run keys (eng_settings_sources). */
static char src_ckpt[1024], src_user[512], src_missing[512], src_file[ENG_PATH];
static bool stored_eval[N_EVAL_SETTINGS]; /* the evaluation setting came from the checkpoint */

bool eng_setting_stored(const setting *s)
{
    for (int i = 0; i < N_EVAL_SETTINGS; i++)
        if (s == eng_setting_find(EVAL_SETTINGS[i])) return stored_eval[i];
    return s->run && src_file[0];
}

static void add_key(char *list, size_t cap, const char *key)
{
    size_t n = strlen(list);
    snprintf(list + n, cap - n, "%s%s", n ? ", " : "", key);
}

const char *eng_settings_sources(char *buf, size_t cap)
{
    buf[0] = 0;
    if (!src_file[0]) return buf;
    snprintf(buf, cap, "from the checkpoint %s: %s, the model and encoding settings (/config), the schedule (/optim)"
             "%s%s%s%s", src_file, src_ckpt, src_user[0] ? "; from the command line or --config: " : "", src_user,
             src_missing[0] ? "; not in the checkpoint (written before they were stored), the defaults: " : "",
             src_missing);
    return buf;
}
int eng_settings_to_run(const eng_options *o, rg_task task, int seed, rg_run_state *rs)
{
    static eng_options run; /* o with this run's task and seed (one process per run: see pool.c, mpi_sched.c) */
    run = *o;
    memset(run.tasks, 0, sizeof run.tasks);
    run.tasks[task] = true;
    run.seed_list[0] = seed;
    run.n_seeds = 1;
    const setting *s;
    for (int i = 0; (s = eng_setting_at(i)); i++) {
        if (!s->run) continue;
        char key[64], text[256];
        const char *p = (const char *)&run + s->off;
        eng_setting_key(s, key, sizeof key);
        rg_status st;
        if (s->kind == K_LIST) {
            s->print(&run, text, sizeof text);
            st = rg_run_state_set_str(rs, key, text);
        } else {
            st = rg_run_state_set_int(rs, key, s->kind == K_BOOL ? *(const bool *)p : *(const int *)p);
        }
        if (st) return -1;
    }
    for (int i = 0; i < N_EVAL_SETTINGS; i++) {
        char key[64], text[256];
        s = eng_setting_find(EVAL_SETTINGS[i]);
        eng_setting_key(s, key, sizeof key);
        if (s->kind == K_LIST) s->print(&run, text, sizeof text);
        rg_status st = s->kind == K_LIST ? rg_run_state_set_str(rs, key, text)
                                         : rg_run_state_set_int(rs, key, *(const int *)((const char *)&run + s->off));
        if (st) return -1;
    }
    /* the run's model size when its grid had a size axis (--sizes): "128x4", read back by --eval, --resume and
     * --continue and named in the report; a run without one has no /run size */
    if (o->n_sizes == 1 && rg_run_state_set_str(rs, "size", o->sizes[0].text)) return -1;
    return 0;
}

/* Why a value of the checkpoint was refused: the message (after "checkpoint FILE: ") and what is allowed. */
typedef struct { char msg[RG_CKPT_STR_LEN + 256], allowed[1024]; } bad_value;

/* One value of /run (attribute a of row s, the table's type: lists a string, the rest an integer), checked against
 * the limits of the flag and stored in o (lists: read by the flag's own parser; one_item: exactly the text this table
 * writes for one run, so the task "sort", not "all" or "copy,sort"). 0, or -1 with *why (o unchanged). */
static int run_value(const setting *s, const rg_run_attr *a, bool one_item, eng_options *o, bad_value *why)
{
    static eng_options scratch;
    char key[64], text[RG_CKPT_STR_LEN], back[RG_CKPT_STR_LEN] = "";
    eng_setting_key(s, key, sizeof key);
    const char *flag = s->name ? s->name : s->key, *dashes = s->name ? "--" : "";
    bool list = s->kind == K_LIST;
    if (a->type != (list ? RG_RUN_ATTR_STRING : RG_RUN_ATTR_INT)) {
        snprintf(why->allowed, sizeof why->allowed, list ? "a string attribute" : "an integer attribute");
        snprintf(why->msg, sizeof why->msg, "/run %s is not %s", key, list ? "a string" : "an integer");
        return -1;
    }
    scratch = *o;
    if (!list) {
        if (eng_setting_set_number(s, &scratch, (double)a->i) == 0) return eng_setting_set_number(s, o, (double)a->i);
        eng_setting_allowed(s, why->allowed, sizeof why->allowed);
        snprintf(why->msg, sizeof why->msg, "/run %s = %lld is outside the limits of %s%s", key, (long long)a->i,
                 dashes, flag);
        return -1;
    }
    snprintf(text, sizeof text, "%s", a->s); /* the parser writes into its argument */
    bool parsed = s->parse(&scratch, text) == 0;
    if (parsed && one_item) s->print(&scratch, back, sizeof back);
    if (!parsed || (one_item && (strchr(a->s, ',') || strcmp(back, a->s) != 0))) {
        if (one_item)
            snprintf(why->allowed, sizeof why->allowed, "the value the engine writes for one run (a task: a "
                     "registered one; a program's own task must be registered with rg_task_register before "
                     "rg_engine_main, see docs/extending.md)");
        else eng_setting_allowed(s, why->allowed, sizeof why->allowed);
        snprintf(why->msg, sizeof why->msg, "/run %s = '%s' is not %s value of --%s", key, a->s,
                 one_item ? "one" : "a", flag);
        return -1;
    }
    *o = scratch;
    return 0;
}

/* The default test lengths of o's task at its train_len (a grid task's sizes). */
static int default_lens(eng_options *o)
{
    for (int t = 0; t < rg_task_count(); t++)
        if (o->tasks[t] && rg_task_is_grid(t)) return eng_default_grid_sizes(t, o->train_len, o->test_lens);
    return eng_default_test_lens(o->train_len, o->test_lens);
}

/* The /run rows of the table and the evaluation settings of rs into o. user: the command line's values win (the
 * training settings --steps, --ckpt-every, --log-every of a resume, and every evaluation setting given), and where
 * each value came from is recorded for eng_settings_sources. 0, or -1 with *why (a missing row, a bad value). */
static int run_values(eng_options *o, const rg_run_state *rs, bool user, bad_value *why)
{
    const setting *s;
    for (int i = 0; (s = eng_setting_at(i)); i++) {
        if (!s->run) continue;
        char key[64];
        eng_setting_key(s, key, sizeof key);
        const rg_run_attr *a = rg_run_state_attr(rs, key);
        if (!a) {
            snprintf(why->allowed, sizeof why->allowed, "a checkpoint written by this version of the engine (older "
                     "ones kept the task, train_len and seed in /config: train again)");
            snprintf(why->msg, sizeof why->msg, "/run %s is missing", key);
            return -1;
        }
        bool wins = user && eng_setting_given(s) && s->mode == M_TRAIN;
        static eng_options scratch;
        scratch = *o;
        if (run_value(s, a, s->kind == K_LIST, wins ? &scratch : o, why)) return -1;
        if (user) add_key(wins ? src_user : src_ckpt, wins ? sizeof src_user : sizeof src_ckpt, key);
    }
    const rg_run_attr *size = rg_run_state_attr(rs, "size"); /* optional: a run of a grid with a size axis */
    o->n_sizes = 0;
    if (size && (size->type != RG_RUN_ATTR_STRING || eng_size_parse(size->s, &o->sizes[0]) ||
                 strcmp(o->sizes[0].text, size->s))) {
        snprintf(why->allowed, sizeof why->allowed, "a model size DxL, DxLhH, DxLfF or DxLhHfF as --sizes takes it");
        snprintf(why->msg, sizeof why->msg, "/run size is not a model size");
        return -1;
    }
    if (size) o->n_sizes = 1;
    if (size && user) add_key(src_ckpt, sizeof src_ckpt, "size");
    for (int i = 0; i < N_EVAL_SETTINGS; i++) {
        s = eng_setting_find(EVAL_SETTINGS[i]);
        char key[64];
        eng_setting_key(s, key, sizeof key);
        const rg_run_attr *a = rg_run_state_attr(rs, key);
        bool given = user && (eng_setting_given(s) || (!strcmp(s->name, "rope-scaling") &&
                                                      eng_setting_given(eng_setting_find("rope-ext"))));
        if (given) add_key(src_user, sizeof src_user, key);
        else if (!a && user) add_key(src_missing, sizeof src_missing, key);
        else if (a && user) add_key(src_ckpt, sizeof src_ckpt, key);
        if (!a && !given && !strcmp(s->name, "test-lens")) o->n_test_lens = default_lens(o);
        if (a && !given && run_value(s, a, false, o, why)) return -1;
        stored_eval[i] = a && !given;
    }
    return 0;
}

/* A value the command line gives over a different stored one, and a setting the checkpoint lacks: said on stderr,
 * so that a difference from the source run is never silent. */
static void note_differences(const eng_options *o, const char *ckpt, const rg_run_state *rs)
{
    for (int i = 0; i < N_EVAL_SETTINGS; i++) {
        const setting *s = eng_setting_find(EVAL_SETTINGS[i]);
        char key[64], now[1024] = "";
        eng_setting_key(s, key, sizeof key);
        const rg_run_attr *a = rg_run_state_attr(rs, key);
        if (s->kind == K_LIST) s->print(o, now, sizeof now);
        else snprintf(now, sizeof now, "%d", *(const int *)((const char *)o + s->off));
        char stored[RG_CKPT_STR_LEN];
        if (a && a->type == RG_RUN_ATTR_STRING) snprintf(stored, sizeof stored, "%s", a->s);
        else if (a) snprintf(stored, sizeof stored, "%lld", (long long)a->i);
        if (!a)
            eng_err("note: checkpoint %s has no /run %s (written before it was stored): the "
                    "%s %s is used\n", ckpt, key, strstr(src_user, key) ? "given" : "default", now);
        else if (strcmp(stored, now) != 0)
            eng_err("note: %s %s replaces the checkpoint's %s\n", key, now, stored);
    }
}

/* One number of /optim or /config, checked against the flag's limits and stored (the command line cannot give
 * these with --resume or --eval: settings.c refuses the flags). */
static void from_ckpt(const setting *s, eng_options *o, double v, const char *ckpt, const char *where)
{
    static eng_options scratch;
    scratch = *o;
    if (eng_setting_set_number(s, &scratch, v) == 0) {
        eng_setting_set_number(s, o, v);
        return;
    }
    char allowed[1024];
    eng_setting_allowed(s, allowed, sizeof allowed);
    eng_usage_error(allowed, "checkpoint %s: %s = %.17g is outside the limits of --%s", ckpt, where, v, s->name);
}

int eng_settings_read_run(eng_options *o, const rg_run_state *rs, char *err, size_t cap)
{
    bad_value why;
    if (run_values(o, rs, false, &why) == 0) return 0;
    snprintf(err, cap, "%s (allowed: %s)", why.msg, why.allowed);
    return -1;
}

void eng_settings_from_checkpoint(eng_options *o, const char *ckpt, const rg_model_config *cfg, const rg_run_state *rs)
{
    /* the /run group: every row of the table marked run, present and of its type (lists: a string) */
    src_ckpt[0] = src_user[0] = src_missing[0] = 0;
    snprintf(src_file, sizeof src_file, "%s", ckpt);
    bad_value why;
    if (run_values(o, rs, true, &why)) eng_usage_error(why.allowed, "checkpoint %s: %s", ckpt, why.msg);
    note_differences(o, ckpt, rs);
    o->n_seeds = 1; /* the run's seed, from /run seed */
    /* the model's token set is its task's (an embedding of another size is not a model of that task) */
    for (int t = 0; t < rg_task_count(); t++)
        if (o->tasks[t] && cfg->vocab_size != rg_task_get((rg_task)t)->vocab_size)
            eng_usage_error("a checkpoint of a model of its task's vocabulary", "checkpoint %s: /config vocab_size = "
                           "%d, but task '%s' has %d tokens", ckpt, cfg->vocab_size, rg_task_name((rg_task)t),
                           rg_task_get((rg_task)t)->vocab_size);
    /* the schedule (/optim) and the model (/config), with the same limits as the flags */
    struct { const char *flag, *where; double v; } vals[] = {
        {"lr", "/optim lr_peak", rs->lr.peak}, {"warmup", "/optim lr_warmup", (double)rs->lr.warmup},
        {"min-lr-frac", "/optim lr_min_frac", rs->lr.min_frac}, {"clip", "/optim grad_clip", rs->lr.grad_clip},
        {"d-model", "/config d_model", cfg->d_model}, {"n-heads", "/config n_heads", cfg->n_heads},
        {"n-layers", "/config n_layers", cfg->n_layers}, {"d-ff", "/config d_ff", cfg->d_ff},
        {"max-len", "/config max_len", cfg->max_len}, {"rope-theta", "/config rope_base", cfg->rope_base}};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        from_ckpt(eng_setting_find(vals[i].flag), o, vals[i].v, ckpt, vals[i].where);
    if (rs->lr.total < 1 || rs->lr.total > ENG_MAX_STEPS)
        eng_usage_error("an integer from 1 to 100000000", "checkpoint %s: /optim lr_total = %lld is outside the "
                       "limits of --steps", ckpt, (long long)rs->lr.total);
    if (rs->step < 0 || rs->step > ENG_MAX_STEPS)
        eng_usage_error("an integer from 0 to 100000000", "checkpoint %s: step = %lld is outside 0..%d", ckpt,
                       (long long)rs->step, ENG_MAX_STEPS);
    if (o->lr_start > rs->lr.total)
        eng_usage_error("lr_start <= lr_total", "checkpoint %s: /run lr_start %d is past /optim lr_total %lld", ckpt,
                       o->lr_start, (long long)rs->lr.total);
    o->lr_total = (int)rs->lr.total;
    o->model.rope_bf16_angles = cfg->rope_bf16_angles; /* /config rope_bf16_angles: the run's variant (eng_variant_of) */
    const char *rngs[] = {"data", "positions"};
    for (int i = 0; i < 2; i++)
        if (!rg_run_state_rng((rg_run_state *)rs, rngs[i]))
            eng_usage_error("a checkpoint of this engine", "checkpoint %s: /rng/%s is missing", ckpt, rngs[i]);
}

int eng_settings_check_optim(const rg_adamw *opt, const char *ckpt)
{
    struct { const char *flag, *key; double v; } vals[] = {
        {"beta1", "beta1", opt->beta1}, {"beta2", "beta2", opt->beta2}, {"eps", "eps", opt->eps},
        {"weight-decay", "weight_decay", opt->weight_decay}};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        static eng_options scratch;
        const setting *s = eng_setting_find(vals[i].flag);
        if (eng_setting_set_number(s, &scratch, vals[i].v) == 0) continue;
        char allowed[1024];
        eng_setting_allowed(s, allowed, sizeof allowed);
        eng_err("checkpoint %s: /optim %s = %.17g is outside the limits of --%s (%s)\n", ckpt,
                vals[i].key, vals[i].v, s->name, allowed);
        return -1;
    }
    return 0;
}

int eng_settings_stored(const rg_run_state *rs, eng_options *o, char *defaulted, size_t cap, char *err, size_t errcap)
{
    eng_options_default(o);
    defaulted[0] = 0;
    if (eng_settings_read_run(o, rs, err, errcap)) return -1;
    for (int i = 0; i < N_EVAL_SETTINGS; i++) {
        char key[64];
        eng_setting_key(eng_setting_find(EVAL_SETTINGS[i]), key, sizeof key);
        if (!rg_run_state_attr(rs, key)) add_key(defaulted, cap, key);
    }
    return 0;
}
