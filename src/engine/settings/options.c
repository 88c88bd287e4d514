/* options.c: the checks of train_order's settings before anything is built or written: the mode (--resume,
 * --eval), the checkpoint's own settings (validated against the flags' limits), the model config, the lengths the
 * model can hold, and the data file (found next to the executable's repository, then where `make install` put it
 * beside the executable, then through $ROPEGRAD_DATA). */
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"
#include "engine/settings/lists.h"
#include "engine/settings/plugin_load.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"
#include "engine/settings/option_table.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The data file: --data, else data/eval_sets.h5 of the repository that holds the executable (build/examples/
 * train_order is two folders below it), else the installed copy beside an installed executable
 * (PREFIX/bin/train_order -> PREFIX/share/ropegrad/eval_sets.h5, docs/install.md), else $ROPEGRAD_DATA. */
static void find_data(eng_options *o)
{
    if (o->data[0]) {
        if (access(o->data, R_OK) != 0)
            eng_usage_error("a readable evaluation-set file", "--data: '%s' cannot be read: %s", o->data,
                           strerror(errno));
        return;
    }
    char exe[ENG_PATH], repo[ENG_PATH] = "", installed[ENG_PATH + 32] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *dir = dirname(exe); /* .../build/examples */
        char up1[ENG_PATH]; /* the installed layout: PREFIX/bin/train_order, PREFIX/share/ropegrad/eval_sets.h5 */
        snprintf(up1, sizeof up1, "%s", dir);
        snprintf(installed, sizeof installed, "%s/share/ropegrad/eval_sets.h5", dirname(up1));
        if (strlen(installed) >= sizeof o->data || access(installed, R_OK) != 0) installed[0] = 0;
        for (int up = 0; up < 4 && strcmp(dir, "/") != 0; up++) {
            char cand[ENG_PATH + 32];
            snprintf(cand, sizeof cand, "%s/%s", dir, ENG_EVAL_FILE);
            if (strlen(cand) < sizeof o->data && access(cand, R_OK) == 0) {
                memcpy(o->data, cand, strlen(cand) + 1);
                return;
            }
            if (!repo[0]) {
                snprintf(cand, sizeof cand, "%s/Makefile", dir);
                if (access(cand, R_OK) == 0) snprintf(repo, sizeof repo, "%s", dir);
            }
            dir = dirname(dir);
        }
    }
    if (installed[0]) {
        memcpy(o->data, installed, strlen(installed) + 1);
        return;
    }
    const char *env = getenv("ROPEGRAD_DATA");
    if (env && *env && strlen(env) < sizeof o->data && access(env, R_OK) == 0) {
        snprintf(o->data, sizeof o->data, "%s", env);
        return;
    }
    eng_usage_error("--data FILE, or ROPEGRAD_DATA=FILE in the environment",
                   "no evaluation-set file: not next to the executable's repository%s%s%s nor in ../share/ropegrad "
                   "beside it, and $ROPEGRAD_DATA is %s",
                   repo[0] ? " (" : "", repo, repo[0] ? ": run make data there)" : "",
                   env && *env ? "not readable" : "unset");
}

/* Loads the whole checkpoint once (parameters, moments, optimizer settings, /run steps_to_learn) into a throwaway
 * model, so that a file that would fail in the run (a NaN weight, a missing or unknown dataset, eps 0) is refused
 * here, with exit status 2 and before anything is written, like a bad /config or /run value. */
static void check_full_load(const char *flag, const char *ck, const rg_model_config *cfg)
{
    rg_model *m = NULL;
    rg_adamw opt;
    static rg_run_state rs;
    /* the file's table sizes (d_ff, max_len, learned_2d_max_rows, ...) are user input: no model larger than any
     * checkpoint this reader accepts is allocated */
    if (rg_model_new_within(cfg, 1, rg_checkpoint_max_params(), &m))
        eng_usage_error("a valid model config", "%s: checkpoint %s: %s", flag, ck, rg_last_error());
    bool bad = rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.0) != 0;
    char msg[1024] = "";
    if (bad || rg_checkpoint_load(ck, m, &opt, &rs)) {
        snprintf(msg, sizeof msg, "%s", rg_last_error());
        if (!bad) rg_adamw_free(&opt);
        rg_model_free(m);
        eng_usage_error("a checkpoint of this engine", "%s: %s", flag, msg); /* msg names the file */
    }
    bad = eng_settings_check_optim(&opt, ck) != 0; /* prints what is wrong */
    if (!bad && opt.step != rs.step) {
        bad = true; /* AdamW's bias correction would restart (or jump) on a resume */
        eng_err("checkpoint %s: /optim step = %lld, but the run's step is %lld (they are "
                "equal in every checkpoint this engine writes)\n", ck, (long long)opt.step, (long long)rs.step);
    }
    rg_adamw_free(&opt);
    rg_model_free(m);
    if (bad) eng_usage_error("a checkpoint of this engine", "%s: checkpoint %s: optimizer settings", flag, ck);
    const rg_run_attr *a = rg_run_state_attr(&rs, "steps_to_learn");
    if (a && (a->type != RG_RUN_ATTR_INT || a->i < -1 || a->i == 0 || a->i > rs.step))
        eng_usage_error("-1 or a step from 1 to the checkpoint's step", "%s: checkpoint %s: /run steps_to_learn is "
                       "not -1 or a step from 1 to the checkpoint's step %lld", flag, ck, (long long)rs.step);
}

/* The model size of a checkpoint's run (below). */
static void size_from_checkpoint(eng_options *o, const char *flag, const char *ck, const rg_model_config *cfg,
                                 const rg_run_state *rs);

/* Reads the checkpoint's config and run state; the encoding comes from its config, the task, seed and training
 * settings from its /run group (eng_settings_from_checkpoint). */
static void from_checkpoint(eng_options *o)
{
    const char *ck = o->resume[0] ? o->resume : o->eval;
    const char *flag = o->resume[0] ? "--resume" : "--eval";
    if (access(ck, R_OK) != 0)
        eng_usage_error("an existing checkpoint file", "%s: checkpoint '%s' cannot be read: %s", flag, ck,
                       strerror(errno));
    rg_model_config cfg;
    static rg_run_state rs;
    rg_checkpoint_set_max_params((int64_t)ENG_MAX_PARAMS); /* the largest model train_order builds */
    eng_plugin_hint(ck, flag); /* an encoding or task of a plugin that is not loaded: which --plugin to pass */
    if (rg_checkpoint_read_config(ck, &cfg, &rs))
        eng_usage_error("a checkpoint of this engine", "%s: %s", flag, rg_last_error());
    eng_settings_from_checkpoint(o, ck, &cfg, &rs);
    if (rg_model_config_validate(&cfg))
        eng_usage_error("a valid model config", "%s: checkpoint %s: %s", flag, ck, rg_last_error());
    check_full_load(flag, ck, &cfg);
    size_from_checkpoint(o, flag, ck, &cfg, &rs);
    o->model = cfg;
    o->model.rope_ext = RG_ROPE_EXT_NONE;
    memset(o->pos, 0, sizeof o->pos);
    o->pos[cfg.pos] = true;
    if (o->eval[0]) return;
    if (o->lr_mode == ENG_LR_RESTART) {
        if (o->steps <= rs.step)
            eng_usage_error("--steps past the checkpoint's step", "--lr-schedule restart: --steps %d is not past the "
                           "checkpoint's step %lld (%s)", o->steps, (long long)rs.step, ck);
        o->lr_start = (int)rs.step;
        o->lr_total = o->steps;
    }
    if (o->steps < rs.step) /* a run cannot be trained back to fewer steps: its report would say both */
        eng_usage_error("--steps at or past the checkpoint's step (--eval evaluates it as it is)", "--resume: --steps "
                       "%d is below the checkpoint's step %lld (%s)", o->steps, (long long)rs.step, ck);
    if (rs.step == o->steps && !o->quiet)
        eng_err("%s is at step %lld already (--steps %d): evaluating only\n", ck, (long long)rs.step, o->steps);
}

/* A resume never replaces its source checkpoint unless --overwrite. */
static void check_resume_target(const eng_options *o)
{
    char out[2 * ENG_PATH], name[128];
    int t = 0, p = 0;
    while (!o->tasks[t]) t++;
    while (!o->pos[p]) p++;
    snprintf(out, sizeof out, "%s/ckpt/%s.h5", o->out, eng_run_name((rg_task)t, (rg_pos_kind)p,
             eng_variant_of(o, (rg_pos_kind)p), o->n_sizes ? o->sizes[0].text : NULL, o->seed_list[0], name,
             sizeof name));
    struct stat a, b;
    if (!o->overwrite && stat(o->resume, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        eng_usage_error("another --out (or --overwrite to replace it)", "--resume %s: the resumed run would be saved "
                       "over its source checkpoint (%s)", o->resume, out);
}

/* The sequence lengths the model must hold (named after the checkpoint they came from, if any). */
static void check_lengths(const eng_options *o)
{
    char src[ENG_PATH + 32] = "";
    if (o->resume[0] || o->eval[0]) snprintf(src, sizeof src, "checkpoint %s: ", o->resume[0] ? o->resume : o->eval);
    int T = 0; /* the longest training sequence of the selected tasks (2 train_len + 3 for the ordering tasks) */
    for (int t = 0; t < rg_task_count(); t++)
        if (o->tasks[t] && rg_task_total_len(t, o->train_len) > T) T = rg_task_total_len(t, o->train_len);
    bool rand = o->random_positions || o->variants[ENG_VAR_RAND];
    for (int p = 0; p < rg_pos_count(); p++) { /* an encoding with a largest position (a learned table) */
        const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)p);
        if (!o->pos[p] || !e->max_position) continue;
        int top = e->max_position(&o->model);
        if (T > top + 1)
            eng_usage_error("2 train_len + 3 <= max_len with learned positions", "%strain_len %d: sequences of %d "
                           "tokens pass the %s position table (max_len %d)", src, o->train_len, T, e->name, top + 1);
        if (rand && o->max_position > top + 1)
            eng_usage_error("max_position <= max_len with learned positions", "%smax_position %d: random positions "
                           "pass the %s position table (max_len %d)", src, o->max_position, e->name, top + 1);
    }
    if (rand && T > o->max_position)
        eng_usage_error("2 train_len + 3 <= max_position with random positions", "%strain_len %d: sequences of %d "
                       "tokens need more random positions than [0, %d) has", src, o->train_len, T, o->max_position);
    for (int k = 0; k < (o->n_sizes ? o->n_sizes : 1); k++) { /* every model size of the grid */
        rg_model_config c = o->model;
        if (o->n_sizes) {
            eng_size_apply(&o->sizes[k], &c);
            if (!src[0]) snprintf(src, sizeof src, "--sizes %s: ", o->sizes[k].text);
        }
        for (int p = 0; p < rg_pos_count(); p++) {
            c.pos = (rg_pos_kind)p;
            if (o->pos[p] && rg_model_config_validate(&c))
                eng_usage_error("a valid model (see --help)", "%s%s", src, rg_last_error());
        }
        /* parameters (an upper estimate: embeddings, learned table, blocks); a model past the limit is refused
         * before anything is allocated */
        double d = c.d_model, ff = c.d_ff;
        double params = 2.0 * c.vocab_size * d + (double)c.max_len * d + 4 * d +
                        c.n_layers * (4 * d * d + 2 * ff * d + ff + 9 * d + 2.0 * 32 * c.n_heads);
        if (params > ENG_MAX_PARAMS)
            eng_usage_error("at most 100 million parameters", "%sa model of d_model %d, n_layers %d, d_ff %d has "
                           "about %.3g parameters", src, c.d_model, c.n_layers, c.d_ff, params);
        if (o->n_sizes && !o->resume[0] && !o->eval[0]) src[0] = 0;
    }
}

/* --sizes (a new run's grid): not with the scalar flags it replaces (--d-model, --n-layers, --d-ff; --n-heads is
 * the default heads of an item), not with a language-model task (its report has no size axis); every item's heads
 * dividing its d_model, and no size twice once the defaults are filled in. */
static void check_sizes(eng_options *o)
{
    static const char *const scalar[] = {"d-model", "n-layers", "d-ff"};
    for (int i = 0; i < 3; i++)
        if (eng_setting_given(eng_setting_find(scalar[i])))
            eng_usage_error("--sizes DxL[hH][fF],... alone, or the scalar --d-model, --n-layers, --d-ff without "
                           "--sizes", "--sizes with --%s: each size gives its own d_model, n_layers and d_ff",
                           scalar[i]);
    for (int t = 0; t < rg_task_count(); t++)
        if (o->tasks[t] && (rg_task_views((rg_task)t) & RG_TASK_VIEW_PERPLEXITY))
            eng_usage_error("--sizes with the sequence tasks (copy, reverse, sort, ...)", "--sizes with the language-"
                           "model task '%s' (its perplexity report has no size axis)", rg_task_name((rg_task)t));
    for (int k = 0; k < o->n_sizes; k++) {
        eng_size *s = &o->sizes[k];
        eng_size_resolve(s, o->model.n_heads);
        if (s->d_model % s->n_heads)
            eng_usage_error("heads that divide d_model (head_dim = d_model / n_heads)", "--sizes %s: %d heads do not "
                           "divide d_model %d", s->text, s->n_heads, s->d_model);
        for (int j = 0; j < k; j++)
            if (s->d_model == o->sizes[j].d_model && s->n_layers == o->sizes[j].n_layers &&
                s->n_heads == o->sizes[j].n_heads && s->d_ff == o->sizes[j].d_ff)
                eng_usage_error("distinct sizes", "--sizes: %s and %s are the same model", o->sizes[j].text, s->text);
    }
}

/* The model size a checkpoint's run was (its /run size, written by a run of a --sizes grid), checked against the
 * checkpoint's config: o->sizes[0] (n_sizes 1), or n_sizes 0 when the run had no size axis. */
static void size_from_checkpoint(eng_options *o, const char *flag, const char *ck, const rg_model_config *cfg,
                                 const rg_run_state *rs)
{
    const rg_run_attr *a = rg_run_state_attr(rs, "size");
    o->n_sizes = 0;
    if (!a) return;
    eng_size s;
    if (a->type != RG_RUN_ATTR_STRING || eng_size_parse(a->s, &s) || strcmp(s.text, a->s) ||
        s.d_model != cfg->d_model || s.n_layers != cfg->n_layers || (s.n_heads && s.n_heads != cfg->n_heads) ||
        (s.d_ff && s.d_ff != cfg->d_ff))
        eng_usage_error("a checkpoint of this engine", "%s: checkpoint %s: /run size is not the size DxL[hH][fF] of "
                       "its model (/config d_model %d, n_layers %d, n_heads %d, d_ff %d)", flag, ck, cfg->d_model,
                       cfg->n_layers, cfg->n_heads, cfg->d_ff);
    s.n_heads = cfg->n_heads;
    s.d_ff = cfg->d_ff;
    o->sizes[0] = s;
    o->n_sizes = 1;
}

/* Grid tasks (docs/grids.md): not mixed with 1-D tasks (a size code is not a length), --train-len and every test
 * size a size of every selected grid task; the default test sizes follow the training size. */
static void check_grids(eng_options *o)
{
    int grid = -1, flat = -1;
    for (int t = 0; t < rg_task_count(); t++)
        if (o->tasks[t]) *(rg_task_is_grid(t) ? &grid : &flat) = t;
    if (grid < 0) return;
    if (flat >= 0)
        eng_usage_error("grid tasks alone, or 1-D tasks alone", "--task: grid task '%s' with 1-D task '%s' (a grid "
                       "size is not a length)", rg_task_name(grid), rg_task_name(flat));
    char text[32];
    for (int t = 0; t < rg_task_count(); t++) {
        if (!o->tasks[t]) continue;
        if (rg_task_shape(t, o->train_len, NULL))
            eng_usage_error("a size of the task: HxW for the grids, FxHxW (F >= 2) for frames", "--train-len %s: not "
                           "a size of grid task '%s'", rg_task_size_text(t, o->train_len, text, sizeof text),
                           rg_task_name(t));
        bool stored = (o->resume[0] || o->eval[0]) && eng_setting_stored(eng_setting_find("test-lens"));
        if (!eng_setting_given(eng_setting_find("test-lens")) && !stored)
            o->n_test_lens = eng_default_grid_sizes(t, o->train_len, o->test_lens);
        for (int i = 0; i < o->n_test_lens; i++)
            if (rg_task_shape(t, o->test_lens[i], NULL))
                eng_usage_error("sizes of the task: HxW for the grids, FxHxW (F >= 2) for frames", "--test-lens: %s is "
                               "not a size of grid task '%s'", rg_task_size_text(t, o->test_lens[i], text,
                               sizeof text), rg_task_name(t));
    }
}

/* Every (task, test length) can be evaluated: canonical lengths come from the file, others are generated. */
static void check_data(const eng_options *o)
{
    for (int t = 0; t < rg_task_count(); t++)
        for (int i = 0; o->tasks[t] && i < o->n_test_lens; i++) {
            rg_evalset es;
            bool generated;
            rg_status st = eng_evalset_get(o, (rg_task)t, o->test_lens[i], &es, &generated);
            if (st == RG_ERR_FORMAT && generated) { /* the task's own hooks broke their contract: not the command */
                eng_err("%s\n", rg_last_error()); /* the program's own name, as every message */
                exit(1);
            }
            if (st)
                eng_usage_error("lengths the data file has, or any other (generated)", "--test-lens / --data: %s",
                               rg_last_error());
            rg_evalset_free(&es);
        }
}

/* A --data file is an evaluation-set file (rg_evalset_load: HDF5, the layout, every set of the ordering tasks at the
 * file's first length valid), even when no test length of the run reads it (a registered task's sets and lengths
 * the file lacks are generated): a wrong file is refused, not carried along into the report's settings. */
static void check_data_file(const char *path)
{
    for (int t = 0; t < rg_task_count(); t++) {
        rg_evalset es = {0};
        if (rg_evalset_has(t) && rg_evalset_load(path, rg_task_name(t), rg_eval_lengths[0], &es))
            eng_usage_error("an evaluation-set file (make data writes data/eval_sets.h5)", "--data %s: %s", path,
                           rg_last_error());
        rg_evalset_free(&es);
    }
}

/* The variants of a new run's grid must give distinct rows: a setting that already makes every run a variant
 * cannot be combined with that variant. */
bool eng_pos_value_given(const rg_model_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->n_pos_values; i++)
        if (strcmp(cfg->pos_values[i].name, name) == 0) return true;
    return false;
}

static void check_variants(const eng_options *o)
{
    if (o->random_positions && (o->variants[ENG_VAR_RAND] || o->variants[ENG_VAR_THETA500K] ||
                                o->variants[ENG_VAR_BF16ANGLES]))
        eng_usage_error("--random-positions with --variants base (every run is then +rand), or --variants without "
                       "--random-positions", "--random-positions with --variants including rand, theta500k or "
                       "bf16angles");
    if (o->model.rope_base == ENG_THETA_500K && (o->variants[ENG_VAR_THETA500K] || o->variants[ENG_VAR_BF16ANGLES]))
        eng_usage_error("--variants theta500k or bf16angles with the default --rope-theta", "--rope-theta 500000 with "
                       "--variants theta500k or bf16angles: the base rope rows would be the theta500k rows");
    if (o->model.rope_bf16_angles && (o->variants[ENG_VAR_BF16ANGLES] || o->variants[ENG_VAR_THETA500K] ||
                                      o->random_positions || o->variants[ENG_VAR_RAND]))
        eng_usage_error("--rope-angles bf16 with --variants base and without --random-positions (a run is one "
                       "variant), or --variants bf16angles", "--rope-angles bf16 with --random-positions or "
                       "--variants including bf16angles, theta500k or rand");
    if (o->model.rope_bf16_angles && o->model.rope_base == ENG_THETA_500K)
        eng_usage_error("one variant per run: --rope-angles bf16 or --rope-theta 500000", "--rope-angles bf16 with "
                       "--rope-theta 500000");
    for (int p = 0; p < rg_pos_count() && o->variants[ENG_VAR_T5MAX128]; p++) {
        const char *md = rg_pos_encoding_of((rg_pos_kind)p)->max_distance_setting;
        if (o->pos[p] && md && eng_pos_value_given(&o->model, md) &&
            rg_pos_config_get(&o->model, md) == ENG_T5_LEGACY_MAX_DISTANCE)
            eng_usage_error("--variants t5max128 with the default T5 max_distance", "--pos-config %s=128 with "
                           "--variants t5max128: the base %s rows would be the t5max128 rows", md, rg_pos_name(p));
    }
}

/* A --pos-config value (other than its declared default) that no encoding of --pos reads has no effect: a note on
 * stderr naming the setting, the encodings that declare it and --pos (not a refusal: a --config file of one grid
 * reused with fewer encodings carries the others' settings). */
static void note_unused_pos_config(const eng_options *o)
{
    for (int i = 0; i < o->model.n_pos_values; i++) {
        const rg_pos_value *v = &o->model.pos_values[i];
        const rg_pos_setting *decl = rg_pos_setting_find(v->name);
        if (!decl || v->value == decl->def) continue;
        char owners[256] = "", in_run[512] = "";
        bool used = false;
        for (int k = 0; k < rg_pos_count(); k++) {
            const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)k);
            if (o->pos[k]) snprintf(in_run + strlen(in_run), sizeof in_run - strlen(in_run), "%s%s", in_run[0] ? "," : "", rg_pos_name((rg_pos_kind)k));
            for (int j = 0; e && j < e->n_settings; j++) {
                if (strcmp(e->settings[j].name, v->name)) continue;
                used |= o->pos[k];
                snprintf(owners + strlen(owners), sizeof owners - strlen(owners), "%s%s", owners[0] ? ", " : "", rg_pos_name((rg_pos_kind)k));
            }
        }
        if (!used)
            eng_err("note: --pos-config %s=%g is a setting of %s, which --pos (%s) does not "
                    "include: it has no effect\n", v->name, v->value, owners, in_run);
    }
}

/* Without --train-len, the selected tasks' own default training size (rg_task_desc.train_len: a grid task's 4x4)
 * when they agree on one; tasks without one take the program's default, and tasks that disagree need --train-len. */
static void default_train_len(eng_options *o)
{
    int v = 0;
    for (int t = 0; t < rg_task_count(); t++) {
        int own = o->tasks[t] ? rg_task_get(t)->train_len : 0;
        if (own && v && own != v) return;
        if (own) v = own;
    }
    if (v) o->train_len = v;
}

void eng_options_check(eng_options *o)
{
    if (o->resume[0] && o->eval[0]) eng_usage_error("one of them", "--resume and --eval together");
    if (!o->resume[0] && !o->eval[0]) check_variants(o);
    if (!o->resume[0] && !o->eval[0]) note_unused_pos_config(o);
    if (!o->resume[0] && !o->eval[0] && o->n_sizes) check_sizes(o);
    o->lr_total = o->steps;
    if (!o->max_position) o->max_position = o->model.max_len; /* the default: the whole learned table */
    if (o->resume[0] || o->eval[0]) from_checkpoint(o);
    else if (!eng_setting_given(eng_setting_find("train-len"))) default_train_len(o);
    /* the protocol's defaults that follow the training length (a checkpoint's, with --resume and --eval) */
    /* an encoding's max_distance_setting (T5's max_distance): --pos-config NAME=N (or the checkpoint's), else the
     * fair value of the longest training distance of the selected tasks (a fresh run sets its own task's: eng_run) */
    int dmax = -1;
    for (int t = 0; t < rg_task_count(); t++) {
        int d = o->tasks[t] ? rg_task_longest_distance(t, o->train_len) : -1;
        if (d > dmax) dmax = d;
    }
    for (int p = 0; p < rg_pos_count() && dmax >= 0; p++) {
        const char *md = rg_pos_encoding_of((rg_pos_kind)p)->max_distance_setting;
        if (!md || eng_pos_value_given(&o->model, md)) continue;
        if (rg_pos_config_set(&o->model, md, eng_fair_max_distance(&o->model, (rg_pos_kind)p, dmax)))
            eng_usage_error("an encoding settings list with room for T5's max_distance", "%s", rg_last_error());
        o->fair_max_distance = true;
    }
    /* the default test lengths follow the training length; a checkpoint's own (or its train_len's defaults) are set
     * already by from_checkpoint */
    bool ckpt = o->resume[0] || o->eval[0];
    if (!ckpt && !eng_setting_given(eng_setting_find("test-lens")))
        o->n_test_lens = eng_default_test_lens(o->train_len, o->test_lens);
    check_grids(o);
    if (o->resume[0]) check_resume_target(o);
    if (o->warmup > o->lr_total - o->lr_start) o->warmup = o->lr_total - o->lr_start;
    if (o->ckpt_every > o->steps) o->ckpt_every = o->steps;
    check_lengths(o);
    bool ordering = false; /* only the ordering tasks read the file; a registered task's sets are generated */
    for (int t = 0; t < rg_task_count(); t++) ordering |= o->tasks[t] && rg_evalset_has(t);
    bool data_given = o->data[0]; /* --data (or a --config's data): checked even when no test length reads it */
    if (ordering || data_given) find_data(o);
    if (data_given) check_data_file(o->data);
    check_data(o);
}
