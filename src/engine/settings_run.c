/* settings_run.c: the settings a checkpoint carries for train_order. Its /run group holds the rows of the option
 * table (settings.c) marked run: the run's task and seed, train_len, the training settings; a resume or --eval reads
 * them back, with the /optim schedule and the model's /config, each checked against its flag's limits before
 * anything is built from it (a file is user input). */
#include "settings.h"

#include <stdio.h>
#include <string.h>

/* The evaluation settings a checkpoint also keeps in /run, so that --resume and --eval evaluate as the source run
 * did unless the command line or --config gives them (older checkpoints without them: the defaults). */
static const char *const EVAL_SETTINGS[] = {"test-lens", "rope-scaling", "eval-every"};
#define N_EVAL_SETTINGS 3

int to_settings_to_run(const to_options *o, rg_task task, int seed, rg_run_state *rs)
{
    static to_options run; /* o with this run's task and seed (one process per run: see pool.c, mpi.c) */
    run = *o;
    memset(run.tasks, 0, sizeof run.tasks);
    run.tasks[task] = true;
    run.seed_list[0] = seed;
    run.n_seeds = 1;
    const setting *s;
    for (int i = 0; (s = to_setting_at(i)); i++) {
        if (!s->run) continue;
        char key[64], text[256];
        const char *p = (const char *)&run + s->off;
        to_setting_key(s, key, sizeof key);
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
        s = to_setting_find(EVAL_SETTINGS[i]);
        to_setting_key(s, key, sizeof key);
        if (s->kind == K_LIST) s->print(&run, text, sizeof text);
        rg_status st = s->kind == K_LIST ? rg_run_state_set_str(rs, key, text)
                                         : rg_run_state_set_int(rs, key, *(const int *)((const char *)&run + s->off));
        if (st) return -1;
    }
    return 0;
}

/* The evaluation settings of the checkpoint's /run (EVAL_SETTINGS), where present and not given by the user; each
 * read by its flag's own parser and limits. --rope-ext is the older name of --rope-scaling. */
static void eval_settings_from_run(to_options *o, const char *ckpt, const rg_run_state *rs)
{
    for (int i = 0; i < N_EVAL_SETTINGS; i++) {
        const setting *s = to_setting_find(EVAL_SETTINGS[i]);
        char key[64], where[96];
        to_setting_key(s, key, sizeof key);
        snprintf(where, sizeof where, "/run %s", key);
        const rg_run_attr *a = rg_run_state_attr(rs, key);
        bool given = to_setting_given(s) || (i == 1 && to_setting_given(to_setting_find("rope-ext")));
        if (!a || given) continue;
        if (s->kind != K_LIST) {
            if (a->type != RG_RUN_ATTR_INT)
                to_usage_error("an integer attribute", "checkpoint %s: %s is not an integer", ckpt, where);
            static to_options scratch;
            scratch = *o;
            if (to_setting_set_number(s, &scratch, (double)a->i) == 0) { to_setting_set_number(s, o, (double)a->i); continue; }
            char allowed[1024];
            to_setting_allowed(s, allowed, sizeof allowed);
            to_usage_error(allowed, "checkpoint %s: %s = %lld is outside the limits of --%s", ckpt, where,
                           (long long)a->i, s->name);
        }
        if (a->type != RG_RUN_ATTR_STRING)
            to_usage_error("a string attribute", "checkpoint %s: %s is not a string", ckpt, where);
        static to_options scratch;
        char text[RG_CKPT_STR_LEN];
        scratch = *o;
        snprintf(text, sizeof text, "%s", a->s); /* the parser writes into its argument */
        if (s->parse(&scratch, text) != 0) {
            char allowed[1024];
            to_setting_allowed(s, allowed, sizeof allowed);
            to_usage_error(allowed, "checkpoint %s: %s = '%s' is not a value of --%s", ckpt, where, a->s, s->name);
        }
        snprintf(text, sizeof text, "%s", a->s);
        s->parse(o, text);
    }
}

/* One number from the checkpoint, checked against the flag's limits; stored unless the command line gave the
 * setting for this mode (--steps, --ckpt-every, --log-every with --resume). */
static void from_ckpt(const setting *s, to_options *o, double v, const char *ckpt, const char *where)
{
    static to_options scratch;
    scratch = *o;
    if (to_setting_set_number(s, &scratch, v) == 0) {
        if (!(to_setting_given(s) && s->mode == M_TRAIN)) to_setting_set_number(s, o, v);
        return;
    }
    char allowed[1024];
    to_setting_allowed(s, allowed, sizeof allowed);
    to_usage_error(allowed, "checkpoint %s: %s = %.17g is outside the limits of %s%s", ckpt, where, v,
                   s->name ? "--" : "", s->name ? s->name : s->key);
}

/* One text value from the checkpoint (a K_LIST row): one item (no comma list), read by the flag's own parser, and
 * exactly what this table writes for one run (the task "sort", not "all" or "copy,sort"). */
static void from_ckpt_text(const setting *s, to_options *o, const char *v, const char *ckpt, const char *where)
{
    static to_options scratch;
    char text[RG_CKPT_STR_LEN], back[RG_CKPT_STR_LEN] = "";
    scratch = *o;
    snprintf(text, sizeof text, "%s", v); /* the parser writes into its argument */
    bool parsed = s->parse(&scratch, text) == 0;
    if (parsed) s->print(&scratch, back, sizeof back);
    snprintf(text, sizeof text, "%s", v);
    if (!parsed || strchr(v, ',') || strcmp(back, v) != 0)
        to_usage_error("the value the engine writes for one run (a task: a registered one; a program's own task "
                       "must be registered with rg_task_register before rg_engine_main, see docs/extending.md)",
                       "checkpoint %s: %s = '%s' is not one value of --%s", ckpt, where, v, s->name);
    s->parse(o, text);
}

void to_settings_from_checkpoint(to_options *o, const char *ckpt, const rg_model_config *cfg, const rg_run_state *rs)
{
    /* the /run group: every row of the table marked run, present and of its type (lists: a string) */
    const setting *s;
    for (int i = 0; (s = to_setting_at(i)); i++) {
        if (!s->run) continue;
        char key[64], where[96];
        to_setting_key(s, key, sizeof key);
        snprintf(where, sizeof where, "/run %s", key);
        const rg_run_attr *a = rg_run_state_attr(rs, key);
        rg_run_attr_type want = s->kind == K_LIST ? RG_RUN_ATTR_STRING : RG_RUN_ATTR_INT;
        if (!a)
            to_usage_error("a checkpoint written by this version of the engine (older ones kept the task, "
                           "train_len and seed in /config: train again)", "checkpoint %s: %s is missing", ckpt,
                           where);
        if (a->type != want)
            to_usage_error(want == RG_RUN_ATTR_INT ? "an integer attribute" : "a string attribute",
                           "checkpoint %s: %s is not %s", ckpt, where, want == RG_RUN_ATTR_INT ? "an integer" :
                           "a string");
        if (s->kind == K_LIST) from_ckpt_text(s, o, a->s, ckpt, where);
        else from_ckpt(s, o, (double)a->i, ckpt, where);
    }
    eval_settings_from_run(o, ckpt, rs);
    o->n_seeds = 1; /* the run's seed, from /run seed */
    /* the model's token set is its task's (an embedding of another size is not a model of that task) */
    for (int t = 0; t < rg_task_count(); t++)
        if (o->tasks[t] && cfg->vocab_size != rg_task_get((rg_task)t)->vocab_size)
            to_usage_error("a checkpoint of a model of its task's vocabulary", "checkpoint %s: /config vocab_size = "
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
        from_ckpt(to_setting_find(vals[i].flag), o, vals[i].v, ckpt, vals[i].where);
    if (rs->lr.total < 1 || rs->lr.total > TO_MAX_STEPS)
        to_usage_error("an integer from 1 to 100000000", "checkpoint %s: /optim lr_total = %lld is outside the "
                       "limits of --steps", ckpt, (long long)rs->lr.total);
    if (rs->step < 0 || rs->step > TO_MAX_STEPS)
        to_usage_error("an integer from 0 to 100000000", "checkpoint %s: step = %lld is outside 0..%d", ckpt,
                       (long long)rs->step, TO_MAX_STEPS);
    if (o->lr_start > rs->lr.total)
        to_usage_error("lr_start <= lr_total", "checkpoint %s: /run lr_start %d is past /optim lr_total %lld", ckpt,
                       o->lr_start, (long long)rs->lr.total);
    o->lr_total = (int)rs->lr.total;
    o->model.rope_bf16_angles = cfg->rope_bf16_angles; /* /config rope_bf16_angles: the run's variant (to_variant_of) */
    const char *rngs[] = {"data", "positions"};
    for (int i = 0; i < 2; i++)
        if (!rg_run_state_rng((rg_run_state *)rs, rngs[i]))
            to_usage_error("a checkpoint of this engine", "checkpoint %s: /rng/%s is missing", ckpt, rngs[i]);
}

int to_settings_check_optim(const rg_adamw *opt, const char *ckpt)
{
    struct { const char *flag, *key; double v; } vals[] = {
        {"beta1", "beta1", opt->beta1}, {"beta2", "beta2", opt->beta2}, {"eps", "eps", opt->eps},
        {"weight-decay", "weight_decay", opt->weight_decay}};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        static to_options scratch;
        const setting *s = to_setting_find(vals[i].flag);
        if (to_setting_set_number(s, &scratch, vals[i].v) == 0) continue;
        char allowed[1024];
        to_setting_allowed(s, allowed, sizeof allowed);
        to_err("checkpoint %s: /optim %s = %.17g is outside the limits of --%s (%s)\n", ckpt,
                vals[i].key, vals[i].v, s->name, allowed);
        return -1;
    }
    return 0;
}
