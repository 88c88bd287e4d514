/* engine.c: the experiment engine's entry point rg_engine_main (engine.h), the whole of what examples/train_order
 * does: defaults -> parse -> check -> build (the output folder and the jobs) -> run (the job pool) -> report -> free. Two report tools skip training:
 * --replot CSV (eng_replot), --compare A B (eng_compare) and --combine A,B,... (eng_combine_load, then eng_report). Exit status: 0 on success, 1 on any failed run or
 * output, 2 on a bad command line (nothing written). */
#include "engine/engine.h"
#include "engine/base/clock.h"
#include "engine/base/kill.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/compare/compare.h"
#include "engine/results/results.h"
#include "engine/run/continue.h"
#include "engine/run/mpi_sched.h"
#include "engine/run/mpi_transport.h"
#include "engine/run/outdir.h"
#include "engine/settings/plugin_load.h"
#include "engine/settings/settings.h"
#include "engine/views/lm_report.h"
#include "engine/views/report.h"
#include "engine/views/views.h"
#include "nn/pos_conformance.h"
#include "task/lm.h"
#include "task/tricks.h"
#include "task/grid.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { const char *cmd; double t0; int done, total; } report_ctx;

/* After each finished job but the last: a report of the runs so far, marked partial, so that a long grid stopped
 * early still leaves one. */
static void partial_report(const eng_options *o, const eng_result *res, int n, void *ctx)
{
    report_ctx *r = ctx;
    r->done++;
    if (n) eng_report(o, res, n, &(eng_report_meta){eng_now_seconds() - r->t0, r->cmd, true, r->done, r->total, NULL});
}

/* --replot CSV and --compare A B: 0, or 1 on failure. */
static int report_tool(const eng_options *o)
{
    if (o->replot[0]) {
        eng_result *res = NULL; /* the CSV is checked before the folder is made */
        int n, train_len, rc;
        if (eng_report_load(o->replot, &res, &n, &train_len)) return 1;
        if ((rc = eng_outdir_check_replot(o)) == 0) rc = eng_replot_results(o->replot, res, n, train_len, o->out);
        free(res);
        return rc == -2 ? 2 : rc ? 1 : 0;
    }
    if (eng_compare(o->compare[0], o->compare[1], stdout)) return 1;
    return fflush(stdout) == 0 ? 0 : 1;
}

/* <out>/settings.json (below). */
static int write_settings(const eng_options *o);

/* --combine A,B,...: the reports of one grid's blocks of seeds as one report in --out (combine.c checks them). Its
 * settings are the first report's with the union of the seeds. 0, 1 on failure, 2 on a folder holding results. */
static int combine_tool(const eng_options *o, const char *cmd)
{
    char list[ENG_PATH];
    snprintf(list, sizeof list, "%s", o->combine);
    const char *paths[ENG_COMBINE_MAX + 1];
    int n = 0;
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p && n <= ENG_COMBINE_MAX; p = strtok_r(NULL, ",", &save))
        paths[n++] = p;
    eng_combined c;
    if (eng_combine_load(paths, n, &c)) return 1;
    eng_options m;
    eng_options_default(&m);
    char src[ENG_PATH + 48];
    snprintf(src, sizeof src, "--combine: the settings united from %s%s", paths[0], n > 1 ? " and the reports after it" : "");
    eng_options_apply_config(&m, c.settings, src);
    memcpy(m.seed_list, c.seeds, sizeof c.seeds[0] * (size_t)c.n_seeds);
    m.n_seeds = c.n_seeds;
    snprintf(m.out, sizeof m.out, "%s", o->out);
    m.overwrite = o->overwrite;
    m.quiet = o->quiet;
    m.lr_total = m.steps; /* what eng_options_check derives (the reports' data file need not exist here) */
    if (!m.max_position) m.max_position = m.model.max_len;
    int lock = eng_outdir_claim(&m), rc = 0;
    if (lock < 0) { eng_combined_free(&c); return lock == -2 ? 2 : 1; }
    if (write_settings(&m) ||
        eng_report(&m, c.res, c.n_res, &(eng_report_meta){c.wall_seconds, cmd, false, 0, 0, c.sources}))
        rc = 1;
    if (!m.quiet)
        eng_err("--combine: %d training runs, %d seeds, from %d reports%s; report in %s/report.md\n",
                c.runs, c.n_seeds, n, c.partial ? " (one or more PARTIAL)" : "", m.out);
    eng_combined_free(&c);
    close(lock);
    return rc;
}

/* The jobs: the checkpoint's one run, or the grid of (task, variant, encoding, size, seed); a variant only for the
 * encodings it applies to (eng_variant_applies). */
static int make_jobs(const eng_options *o, eng_job *jobs)
{
    int n = 0;
    if (o->resume[0] || o->eval[0]) { /* the one run of the checkpoint (its variant: eng_run) */
        for (int t = 0; t < rg_task_count(); t++)
            for (int p = 0; p < rg_pos_count(); p++)
                if (o->tasks[t] && o->pos[p]) jobs[n++] = (eng_job){(rg_task)t, (rg_pos_kind)p, ENG_VAR_BASE,
                                                                   o->seed_list[0], o->n_sizes ? 1 : 0};
        return n;
    }
    for (int t = 0; t < rg_task_count(); t++)
        for (int v = 0; v < ENG_VAR_COUNT; v++)
            for (int p = 0; p < rg_pos_count(); p++)
                for (int z = 0; z < (o->n_sizes ? o->n_sizes : 1); z++) /* without --sizes: one, the scalar flags' */
                    for (int s = 0; s < o->n_seeds; s++)
                        if (o->tasks[t] && o->variants[v] && o->pos[p] &&
                            eng_variant_applies((eng_variant)v, (rg_pos_kind)p))
                            jobs[n++] = (eng_job){(rg_task)t, (rg_pos_kind)p, (eng_variant)v, o->seed_list[s],
                                                  o->n_sizes ? z + 1 : 0};
    return n;
}

/* <out>/settings.json: the resolved settings (for a new run, a valid --config file). */
static int write_settings(const eng_options *o)
{
    char path[ENG_PATH + 32];
    snprintf(path, sizeof path, "%s/settings.json", o->out);
    FILE *f = fopen(path, "w");
    if (f) eng_options_print(o, f);
    if (!f || fclose(f) != 0) {
        eng_err("cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* Appends s to cmd[0..*at) if it fits below room (with its terminating 0). False when it does not. */
static bool put(char *cmd, size_t *at, size_t room, const char *s)
{
    size_t n = strlen(s);
    if (*at + n + 1 > room) return false;
    memcpy(cmd + *at, s, n + 1);
    *at += n;
    return true;
}

/* The command line for the report, each argument shell-quoted when needed so that it reads back as typed (it is
 * only printed, never run). A command longer than cap ends with a mark that says it was cut. */
static void command_line(int argc, char **argv, char *cmd, size_t cap)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,=:+-";
    static const char cut[] = " ... (cut: the command is longer than this report keeps)";
    const size_t room = cap - (sizeof cut - 1); /* the text proper stops here, leaving room for the mark */
    size_t at = 0;
    bool whole = true;
    cmd[0] = 0;
    for (int i = 0; i < argc && whole; i++) {
        const char *a = argv[i];
        bool plain = *a && strspn(a, safe) == strlen(a);
        whole = (i == 0 || put(cmd, &at, room, " ")) && put(cmd, &at, room, plain ? a : "'");
        for (const char *p = a; !plain && *p && whole; p++)
            whole = put(cmd, &at, room, *p == '\'' ? "'\\''" : (char[]){*p, 0});
        if (!plain && whole) whole = put(cmd, &at, room, "'");
    }
    if (!whole) snprintf(cmd + at, cap - at, "%s", cut);
}

/* --check-pos NAME: the conformance check in this program's precision; 0 all checks pass, 1 one fails, 2 an
 * unknown encoding. */
static int check_pos(const char *name)
{
    int failed = 0;
    rg_status st = rg_pos_conformance(name, &(rg_pos_report){stdout, NULL, NULL}, &failed);
    if (st == RG_ERR_ARG && rg_pos_parse(name, &(rg_pos_kind){0}) != RG_OK)
        eng_usage_error("a registered encoding (see --help; a plugin's with --plugin PATH)", "--check-pos: %s",
                       rg_last_error());
    if (st) {
        fprintf(stderr, "%s: --check-pos %s: %s\n", eng_prog(), name, rg_last_error());
        return 1;
    }
    printf("%s: %s: %s (%s checks; docs/extending.md)\n", eng_prog(), name, failed ? "FAILED" : "conforms",
           rg_build_real());
    return failed ? 1 : fflush(stdout) == 0 ? 0 : 1;
}

int rg_engine_main(int argc, char **argv)
{
    eng_set_prog(argc > 0 ? argv[0] : NULL); /* messages and --help name the program */
    rg_blas_prefer_fast_kernels(argv); /* OpenBLAS 0.3.21 runs SSE3 kernels on CPUs it does not know */
    eng_mpi_start(&argc, &argv); /* MPI_Init only under mpirun (mpi_transport.h) */
    if (rg_task_register_tricks() || rg_lm_register() || rg_task_register_grids()) { /* opt-in: tricks.h, lm.h, grid.h */
        fprintf(stderr, "%s: %s\n", eng_prog(), rg_last_error());
        return 1;
    }
    eng_plugins_load(argc, argv); /* before parsing: --pos and --task take the plugins' names */
    eng_options o;
    eng_options_default(&o);
    eng_options_parse(argc, argv, &o);
    if (o.check_pos[0]) return check_pos(o.check_pos);
    if (o.replot[0] || o.compare[0][0]) return report_tool(&o);
    static char cmd[8192];
    command_line(argc, argv, cmd, sizeof cmd);
    if (o.combine[0]) return combine_tool(&o, cmd);
    if (o.cont[0]) eng_continue_load(&o, cmd, sizeof cmd); /* the folder's settings and command line (continue.c) */
    eng_options_check(&o);
    eng_mpi_check(&o);
    if (o.print_config) { eng_options_print(&o, stdout); return 0; }
    if (rg_set_linear_precision(o.precision)) { /* before any run (and on every MPI rank) */
        eng_err("--%s\n", rg_last_error()); /* "precision bf16: <why>" */
        return 1;
    }
    if (eng_mpi_rank() > 0) return eng_mpi_worker(&o); /* MPI ranks 1..N-1 serve rank 0 (mpi_sched.h) */

    int lock = eng_outdir_claim(&o);
    if (lock < 0) return lock == -2 ? 2 : 1; /* 2: a folder of another invocation's results */
    if (!o.continuing && (write_settings(&o) || eng_continue_record(&o, cmd))) return 1;
    eng_job *jobs = calloc((size_t)RG_TASK_MAX * rg_pos_count() * ENG_VAR_COUNT * (size_t)o.n_seeds *
                           (size_t)(o.n_sizes ? o.n_sizes : 1), sizeof *jobs);
    int n_jobs = jobs ? make_jobs(&o, jobs) : 0;
    eng_result *all = calloc((size_t)n_jobs * (1 + ENG_MAX_EXTS) + 1, sizeof *all);
    if (!jobs || !all) { eng_err("out of memory\n"); return 1; }
    if (o.jobs > n_jobs) o.jobs = n_jobs;
    rg_set_num_threads(o.threads);

    report_ctx ctx = {cmd, eng_now_seconds(), 0, n_jobs};
    int n_all = 0;
    int failed = (o.continuing ? eng_continue_pool_run : eng_mpi_pool_run)(&o, jobs, n_jobs, all, &n_all,
                                                                        partial_report, &ctx);
    double wall = eng_now_seconds() - ctx.t0;
    int rc = failed ? 1 : 0;
    eng_kill_arm_report(); /* tests only (continue.c) */
    bool reported = n_all && eng_report(&o, all, n_all, &(eng_report_meta){wall, cmd, false, n_jobs - failed, n_jobs,
                                                                         NULL}) == 0;
    if (n_all && !reported) rc = 1;
    if (eng_lm_report(&o, jobs, n_jobs, cmd, wall)) rc = 1; /* the LM tasks' perplexity report (lm_run.h) */
    if (!o.quiet) /* names report.md only when written (LM tasks alone write lm_report.md, named by eng_lm_report) */
        eng_err("%d run(s), %d failed, %.1f s%s%s%s\n", n_jobs, failed, wall,
                reported ? "; report in " : "", reported ? o.out : "", reported ? "/report.md" : "");
    free(all);
    free(jobs);
    close(lock);
    return rc;
}

rg_status rg_engine_run_settings(const rg_run_state *rs, rg_engine_settings *s)
{
    static eng_options o;
    char err[RG_CKPT_STR_LEN + 512];
    memset(s, 0, sizeof *s);
    if (eng_settings_stored(rs, &o, s->defaulted, sizeof s->defaulted, err, sizeof err))
        return rg_error(RG_ERR_FORMAT, "run state: %s", err);
    char defaulted[sizeof s->defaulted];
    memcpy(defaulted, s->defaulted, sizeof defaulted);
    *s = (rg_engine_settings){.seed = o.seed_list[0], .train_len = o.train_len, .steps = o.steps, .batch = o.batch,
                              .micro_batches = o.micro_batches, .ckpt_every = o.ckpt_every, .log_every = o.log_every,
                              .lr_start = o.lr_start, .max_position = o.max_position,
                              .random_positions = o.random_positions, .n_test_lens = o.n_test_lens,
                              .n_rope_scaling = o.n_exts, .eval_every = o.eval_every, .extrap_every = o.extrap_every};
    for (int t = 0; t < rg_task_count(); t++)
        if (o.tasks[t]) snprintf(s->task, sizeof s->task, "%s", rg_task_name((rg_task)t));
    memcpy(s->test_lens, o.test_lens, sizeof(int) * (size_t)o.n_test_lens);
    for (int i = 0; i < o.n_exts; i++) { s->rope_type[i] = o.exts[i]; s->rope_factor[i] = o.ext_factor[i]; }
    if (o.n_sizes == 1) snprintf(s->size, sizeof s->size, "%s", o.sizes[0].text);
    memcpy(s->defaulted, defaulted, sizeof defaulted);
    return RG_OK;
}
