/* continue.c: `train_order --continue OUT`, an interrupted invocation taken up where it stopped (the Hugging Face
 * Trainer's resume_from_checkpoint=True, for a whole grid). Every invocation that trains new runs records itself at
 * start in <out>/invocation.json (its command line and resolved settings, written atomically), and each run, once
 * evaluated, its result records in <out>/results/<run>.bin (results_file.c). --continue OUT reads the settings back
 * (only --jobs and --quiet may be given with it), then per run of the grid: a results file means finished (its
 * records are used as they are), else a checkpoint <out>/ckpt/<run>.h5 means interrupted (the run resumes from it,
 * with the loss window the checkpoint keeps, so it ends bit for bit as an uninterrupted run), else the run starts.
 * The report is then the one the uninterrupted invocation writes (its command line included); only its time
 * columns differ. Every file read from OUT is user input: refused, naming it and what is wrong, before anything runs
 * (exit 2). The job pool and MPI ranks run the remaining runs exactly as they run a grid (eng_mpi_pool_run).
 * The plugins the invocation loaded are recorded there too (file and SHA-256): --continue needs the same builds
 * loaded again (--plugin or ROPEGRAD_PLUGINS), since a run of another build of an encoding is another model.
 *
 * Also the kill points of the tests (TRAIN_ORDER_KILL=POINT:N, tests only): the whole invocation (its process
 * group) is killed with SIGKILL at that point, as a crash or an out-of-memory kill would. */
#include "engine/run/continue.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/run/mpi_sched.h"
#include "engine/run/results_file.h"
#include "engine/run/resume.h"
#include "engine/run/run.h"
#include "engine/settings/settings.h"
#include "engine/settings/option_table.h"
#include "engine/settings/plugin_load.h"
#include "io/guard.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INVOCATION "invocation.json"
#define FORMAT "train_order invocation"
#define VERSION 1
#define MAX_JSON (1 << 20)

/* ------------------------------------------------------------------ <out>/invocation.json */

int eng_continue_record(const eng_options *o, const char *cmd)
{
    if (o->resume[0] || o->eval[0] || o->continuing) return 0; /* only a grid of new runs can be continued */
    char path[ENG_PATH + 32], *settings = eng_options_json(o), *text = NULL;
    snprintf(path, sizeof path, "%s/%s", o->out, INVOCATION);
    cJSON *root = cJSON_CreateObject(), *sj = settings ? cJSON_Parse(settings) : NULL;
    cJSON_free(settings);
    if (root && sj) {
        cJSON_AddStringToObject(root, "format", FORMAT);
        cJSON_AddNumberToObject(root, "version", VERSION);
        cJSON_AddStringToObject(root, "command", cmd);
        cJSON_AddItemToObject(root, "settings", sj);
        sj = NULL;
        cJSON *plugins = cJSON_AddArrayToObject(root, "plugins");
        for (int i = 0; plugins && i < eng_plugin_count(); i++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "file", eng_plugin_at(i)->file);
            cJSON_AddStringToObject(p, "sha256", eng_plugin_at(i)->sha256);
            cJSON_AddItemToArray(plugins, p);
        }
        text = cJSON_Print(root);
    }
    cJSON_Delete(root);
    cJSON_Delete(sj);
    if (!text) {
        eng_err("cannot write %s: out of memory\n", path);
        return -1;
    }
    rg_status st = rg_atomic_write("the invocation's settings", path, text, strlen(text));
    cJSON_free(text);
    if (st) eng_err("%s\n", rg_last_error());
    return st ? -1 : 0;
}

/* The text of path (at most MAX_JSON bytes, no NUL byte) into a malloc'ed string; exits 2 naming it otherwise. */
static char *read_json_text(const char *path)
{
    FILE *f = eng_fopen_read(path);
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        eng_usage_error("the output folder of an invocation of this engine (it holds invocation.json)", "--continue: "
                       "%s: %s", path, !f ? strerror(errno) : "not a regular file");
    char *text = st.st_size <= MAX_JSON ? malloc((size_t)st.st_size + 1) : NULL;
    size_t n = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    bool whole = text && n == (size_t)st.st_size && fgetc(f) == EOF;
    fclose(f);
    if (!whole) {
        free(text);
        eng_usage_error("invocation.json as the engine wrote it", "--continue: %s: %s", path, st.st_size > MAX_JSON ?
                       "larger than 1 MiB" : "changed while being read (or out of memory)");
    }
    text[n] = 0;
    if (strlen(text) != n) eng_usage_error("invocation.json as the engine wrote it", "--continue: %s: a NUL byte at "
                                          "byte %zu", path, strlen(text));
    const char *esc = strstr(text, "\\u0000"); /* cJSON would end a string there, dropping the rest silently */
    if (esc) eng_usage_error("invocation.json as the engine wrote it", "--continue: %s: a \\u0000 escape at byte %ld",
                            path, (long)(esc - text));
    return text;
}

/* The flags given with --continue: only --jobs and --quiet (how it runs, not what), which win, and --plugin (the
 * plugins the invocation loaded, checked by plugins_wrong). */
static void check_flags(const eng_options *cli)
{
    const setting *s;
    for (int i = 0; (s = eng_setting_at(i)); i++)
        if (s->name && eng_setting_given(s) && strcmp(s->name, "continue") && strcmp(s->name, "jobs") &&
            strcmp(s->name, "quiet") && strcmp(s->name, "plugin"))
            eng_usage_error("--continue OUT with --jobs N, --quiet and --plugin only (the folder's settings are used)",
                           "--%s does not apply with --continue", s->name);
}

/* The plugins invocation.json records (an array of {file, sha256}; absent: none) against those loaded now: each
 * must be loaded in the same build (its SHA-256). NULL, or what is wrong (a static buffer), for "--continue: PATH:". */
static const char *plugins_wrong(const cJSON *list)
{
    static char why[512];
    if (!list) return NULL;
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > ENG_PLUGIN_MAX) {
        snprintf(why, sizeof why, "plugins is not a list of at most %d plugins", ENG_PLUGIN_MAX);
        return why;
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, list) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(p, "file");
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "sha256");
        if (!cJSON_IsString(f) || !cJSON_IsString(h) || strlen(f->valuestring) > 255 || strlen(h->valuestring) != 64)
            return "a plugins entry without its file and 64-digit sha256";
        bool same = false, other = false;
        for (int i = 0; i < eng_plugin_count(); i++) {
            same |= strcmp(eng_plugin_at(i)->sha256, h->valuestring) == 0;
            other |= strcmp(eng_plugin_at(i)->file, f->valuestring) == 0;
        }
        if (same) continue;
        snprintf(why, sizeof why, "the invocation ran with the plugin %s (sha256 %.16s...), %s: pass --plugin "
                 "PATH/%s (the same build)", f->valuestring, h->valuestring, other ? "and the one loaded now is "
                 "another build of it" : "which is not loaded", f->valuestring);
        return why;
    }
    return NULL;
}

void eng_continue_load(eng_options *o, char *cmd, size_t cap)
{
    check_flags(o);
    bool jobs_given = eng_setting_given(eng_setting_find("jobs")), quiet_given = eng_setting_given(
        eng_setting_find("quiet"));
    eng_options cli = *o;
    char path[ENG_PATH + 32];
    snprintf(path, sizeof path, "%s/%s", cli.cont, INVOCATION);
    char *text = read_json_text(path);
    cJSON *root = cJSON_ParseWithOpts(text, NULL, true);
    free(text);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format"),
                *ver = cJSON_GetObjectItemCaseSensitive(root, "version"),
                *c = cJSON_GetObjectItemCaseSensitive(root, "command"),
                *set = cJSON_GetObjectItemCaseSensitive(root, "settings");
    const char *wrong = !cJSON_IsObject(root) ? "not a JSON object" :
                        !cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) ? "its format is not '" FORMAT "'" :
                        !cJSON_IsNumber(ver) || ver->valuedouble != VERSION ? "written by another version (format "
                        "version other than 1)" : !cJSON_IsString(c) || strlen(c->valuestring) >= cap ?
                        "no command line (a string)" : !cJSON_IsObject(set) ? "no settings object" : NULL;
    if (wrong) {
        cJSON_Delete(root);
        eng_usage_error("invocation.json as the engine wrote it", "--continue: %s: %s", path, wrong);
    }
    const char *plugins = plugins_wrong(cJSON_GetObjectItemCaseSensitive(root, "plugins"));
    if (plugins) {
        cJSON_Delete(root);
        eng_usage_error("the plugins the invocation loaded, in the same builds", "--continue: %s: %s", path, plugins);
    }
    snprintf(cmd, cap, "%s", c->valuestring);
    char *settings = cJSON_PrintUnformatted(set), src[ENG_PATH + 64];
    cJSON_Delete(root);
    if (!settings) eng_usage_error("invocation.json as the engine wrote it", "--continue: %s: out of memory", path);
    snprintf(src, sizeof src, "--continue: %s: settings", path);
    eng_options_default(o);
    eng_options_apply_config(o, settings, src); /* every value checked as --config's are */
    cJSON_free(settings);
    if (o->resume[0] || o->eval[0] || o->cont[0] || o->print_config)
        eng_usage_error("the settings of a grid of new runs", "--continue: %s: settings of a --resume, --eval or "
                       "--continue invocation", path);
    snprintf(o->out, sizeof o->out, "%s", cli.cont); /* the folder, wherever it is now */
    if (jobs_given) o->jobs = cli.jobs;
    if (quiet_given) o->quiet = cli.quiet;
    o->continuing = true;
}

/* ------------------------------------------------------------------ the loss window in the run state */

/* ------------------------------------------------------------------ the runs of OUT */

/* What is wrong with the checkpoint at path as the interrupted run of job j (NULL when nothing; into why): it must
 * load as the model, optimizer and /run settings this invocation gives the run (rg_checkpoint_load: digest, the
 * HDF5 reader process, bounds, every /config value equal), at a step within the run, and with a valid loss window
 * (train loop: loss_window_*). */
static const char *check_checkpoint(const eng_options *o, const eng_job *j, const char *path, char *why, size_t cap)
{
    static eng_options ov;
    static rg_run_state rs, want;
    eng_run_options(o, j, &ov);
    rg_model_config cfg = ov.model;
    cfg.pos = j->pos;
    cfg.vocab_size = rg_task_get(j->task)->vocab_size;
    rg_model *m = NULL;
    rg_adamw opt = {0};
    why[0] = 0;
    if (rg_model_new_within(&cfg, 1, rg_checkpoint_max_params(), &m) ||
        rg_adamw_init(&opt, &m->params, ov.beta1, ov.beta2, ov.eps, ov.weight_decay) ||
        rg_checkpoint_load(path, m, &opt, &rs))
        snprintf(why, cap, "%s", rg_last_error());
    else if (rs.step < 1 || rs.step > ov.steps || opt.step != rs.step)
        snprintf(why, cap, "step %lld (optimizer step %lld), but the run trains 1..%d steps", (long long)rs.step,
                 (long long)opt.step, ov.steps);
    else if (rs.lr.peak != ov.lr || rs.lr.warmup != ov.warmup || rs.lr.total != ov.lr_total ||
             rs.lr.min_frac != ov.min_lr_frac || rs.lr.grad_clip != ov.clip || opt.beta1 != ov.beta1 ||
             opt.beta2 != ov.beta2 || opt.eps != ov.eps || opt.weight_decay != ov.weight_decay)
        snprintf(why, cap, "its schedule or optimizer settings (/optim) are not this invocation's (lr %g, warmup %lld, "
                 "total %lld, min_lr_frac %g, clip %g, betas %g %g, eps %g, weight_decay %g)", rs.lr.peak,
                 (long long)rs.lr.warmup, (long long)rs.lr.total, rs.lr.min_frac, rs.lr.grad_clip, opt.beta1,
                 opt.beta2, opt.eps, opt.weight_decay);
    rg_run_state_init(&want);
    if (!why[0] && eng_settings_to_run(&ov, j->task, j->seed, &want)) snprintf(why, cap, "%s", rg_last_error());
    for (int i = 0; !why[0] && i < want.n_attrs; i++) {
        const rg_run_attr *w = &want.attrs[i], *a = rg_run_state_attr(&rs, w->key);
        if (!a || a->type != w->type || a->i != w->i || strcmp(a->s, w->s))
            snprintf(why, cap, "/run %s is not this invocation's value for the run", w->key);
    }
    if (!why[0] && eng_run_check_state(&rs, &ov, why, cap)) {} /* the loss window and steps_to_learn */
    if (m && opt.m) rg_adamw_free(&opt);
    rg_model_free(m);
    return why[0] ? why : NULL;
}

typedef enum { RUN_NEW, RUN_RESUME, RUN_DONE } run_state_kind;

/* Sorts the jobs of OUT into finished (records into done + k * (1 + ENG_MAX_EXTS), counts[k]), interrupted and not
 * started; exits 2 naming the first file that cannot be used. */
static void scan(const eng_options *o, const eng_job *jobs, int n_jobs, run_state_kind *kind, eng_result *done,
                 int *counts)
{
    rg_checkpoint_set_max_params((int64_t)ENG_MAX_PARAMS);
    uint32_t digest = eng_settings_digest(o);
    for (int k = 0; k < n_jobs; k++) {
        char name[128], path[ENG_PATH + 192], why[1024];
        static eng_options ov;
        eng_run_options(o, &jobs[k], &ov);
        eng_run_name(jobs[k].task, jobs[k].pos, eng_variant_of(&ov, jobs[k].pos), ov.n_sizes ? ov.sizes[0].text : NULL,
                     jobs[k].seed, name, sizeof name);
        eng_results_path(o, name, path, sizeof path);
        struct stat st;
        kind[k] = RUN_NEW;
        counts[k] = 0;
        if (lstat(path, &st) == 0) {
            counts[k] = eng_results_load(&ov, digest, &jobs[k], path, done + k * (1 + ENG_MAX_EXTS), why, sizeof why);
            if (counts[k] < 0) eng_usage_error("the results files the engine wrote (or remove the file to run the "
                                              "run again)", "--continue: %s: %s", path, why);
            kind[k] = RUN_DONE;
            continue;
        }
        snprintf(path, sizeof path, "%s/ckpt/%s.h5", o->out, name);
        if (lstat(path, &st) != 0) continue;
        if (check_checkpoint(o, &jobs[k], path, why, sizeof why))
            eng_usage_error("the checkpoints the engine wrote (or remove the file to start the run again)",
                           "--continue: %s: %s", path, why);
        kind[k] = RUN_RESUME;
    }
}

typedef struct {
    const eng_options *o;
    const eng_job *jobs;
    int n_jobs;
    const run_state_kind *kind;
    const int *counts;
    const eng_result *done;
    eng_result *merged;
    void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx);
    void *ctx;
} merge_ctx;

/* The results in job order: a finished job's stored records, the others' from res[0..n) (found by their run). */
static int merge(const merge_ctx *m, const eng_result *res, int n)
{
    static eng_options ov;
    int out = 0;
    for (int k = 0; k < m->n_jobs; k++) {
        const eng_job *j = &m->jobs[k];
        for (int i = 0; i < m->counts[k]; i++) m->merged[out++] = m->done[k * (1 + ENG_MAX_EXTS) + i];
        if (m->kind[k] == RUN_DONE) continue;
        eng_run_options(m->o, j, &ov);
        eng_variant v = eng_variant_of(&ov, j->pos);
        for (int i = 0; i < n; i++)
            if (res[i].task == j->task && res[i].pos == j->pos && res[i].seed == j->seed && res[i].variant == v)
                m->merged[out++] = res[i];
    }
    return out;
}

static void partial(const eng_options *o, const eng_result *res, int n, void *ctx)
{
    merge_ctx *m = ctx;
    if (m->on_partial) m->on_partial(o, m->merged, merge(m, res, n), m->ctx);
}

int eng_continue_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                         void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx)
{
    run_state_kind *kind = calloc((size_t)n_jobs + 1, sizeof *kind);
    int *counts = calloc((size_t)n_jobs + 1, sizeof *counts), failed = 0, todo = 0, resumed = 0;
    eng_result *done = calloc((size_t)n_jobs * (1 + ENG_MAX_EXTS) + 1, sizeof *done);
    eng_result *part = calloc((size_t)n_jobs * (1 + ENG_MAX_EXTS) + 1, sizeof *part);
    eng_job *left = calloc((size_t)n_jobs + 1, sizeof *left);
    if (!kind || !counts || !done || !part || !left) {
        eng_err("--continue: out of memory\n");
        failed = n_jobs;
    } else {
        scan(o, jobs, n_jobs, kind, done, counts);
        /* the temporary files the interrupted invocation left (files.h's pattern, of processes that no longer
         * run): its report and plots in OUT, checkpoints in ckpt/, results files in results/, logs in runs/<run>/ */
        eng_remove_stale_tmp(o->out, 2);
        for (int k = 0; k < n_jobs; k++) {
            if (kind[k] != RUN_DONE) left[todo++] = jobs[k];
            resumed += kind[k] == RUN_RESUME;
        }
        if (!o->quiet)
            eng_err("--continue %s: %d run(s) finished (kept), %d to resume from their "
                    "checkpoints, %d to start\n", o->out, n_jobs - todo, resumed, todo - resumed);
        merge_ctx m = {o, jobs, n_jobs, kind, counts, done, all, on_partial, ctx};
        int n_part = 0;
        eng_options run = *o;
        if (run.jobs > todo) run.jobs = todo > 0 ? todo : 1;
        failed = todo ? eng_mpi_pool_run(&run, left, todo, part, &n_part, partial, &m) : 0;
        *n_all = merge(&m, part, n_part);
    }
    free(kind);
    free(counts);
    free(done);
    free(part);
    free(left);
    return failed;
}
