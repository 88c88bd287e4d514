/* engine.h: the experiment engine (build/libropegrad_engine.a, installed as lib/libropegrad_engine.a with
 * <ropegrad/engine/engine.h>), the library behind examples/train_order: the grid of task x position encoding x
 * training variant x model size x seed, the job pool (and MPI ranks), one run (training with held-out steps-to-learn
 * measurements, checkpoints, evaluation at the test lengths), and the outputs (report.md, report.csv, report.json,
 * plots, --compare, --replot) with the output folder's safety rules. Every option is documented by
 * `train_order --help` and in README.md.
 *
 * A program of its own calls rg_engine_main with its command line, exactly as examples/train_order/main.c does:
 *
 *     #include <ropegrad/engine/engine.h>
 *     int main(int argc, char **argv) { return rg_engine_main(argc, argv); }
 *
 * Its own tasks: register them first (rg_task_register, <ropegrad/task/task.h>), then call rg_engine_main. The
 * engine knows tasks only through the registry, so a registered task is a value of --task like copy (and is part of
 * --task all); it is trained on batches of rg_task_batch_sample, evaluated on sets built by rg_task_evalset from
 * RG_EVAL_SEED at every test length (marked "generated" in the report: the data file holds the ordering tasks
 * only, and is not needed when no ordering task runs), scored by its score hook, and gets its own rows, tables,
 * plots and intervals. The checkpoint's /run group records the task by name, so `--eval CKPT` and `--resume CKPT`
 * work in any program that registered the same task (another one stops with exit status 2, naming the task and
 * rg_task_register), and so do --compare and --replot of its reports. A run's model takes the task's vocab_size.
 * examples/custom_task.c is the worked example (docs/extending.md). Without a program of one's own, a plugin does
 * the same in the stock train_order (--plugin PATH, ROPEGRAD_PLUGINS; <ropegrad/engine/plugin.h>).
 *
 * A program on the engine names itself: its messages, usage line and --help use the base name of argv[0], and its
 * checkpoints are "checkpoints of this engine", read by any program that registered the same encoding and task.
 *
 * THE FILE MAP. The engine's internal files are not part of the installed interface (engine.h and plugin.h are).
 * They stand in layers; a file uses names of its own layer and of the layers below it, never of a layer above, and
 * no two files use each other's names, directly or through others (no circle of files). From the top:
 *   engine.c     the entry: defaults -> parse -> check -> build -> run -> report, the modes (--compare,
 *                --combine, --replot, --continue, --eval, MPI ranks), and rg_engine_run_settings.
 *   compare/     compare.c (--compare: two reports cell by cell, their settings side by side; where a report's
 *                settings are found), combine.c (--combine: reports of one grid's blocks of seeds joined).
 *   views/       the report: lm_report.c (the language models' report) above report.c (report.md, report.csv,
 *                report.json, provenance) above views.c (the table of views: what a report shows of a task, as
 *                its task asks through rg_task_views; report.md's task sections, report.json's cell keys and the
 *                figures are loops over it; --replot) above the views' own files: view_tables.c (the exact-match,
 *                max/median and token-accuracy tables and cell statistics), report_grid.c (the grid tasks' matrices
 *                and figures), report_protocol.c (the protocol statement, encodings' settings, tricks, cells and
 *                positions files).
 *   run/         running: pool.c (the job pool), mpi_sched.c (the grid over MPI ranks) above run.c (one run:
 *                train, checkpoint, evaluate), continue.c (--continue); below run.c: evaluate.c (greedy decoding
 *                and scores), run_curves.c (extrapolation over training), run_grid.c (grid tasks at evaluation),
 *                lm_run.c (language-model runs), resume.c (what a run keeps for a resume), results_file.c (a
 *                finished run's records), outdir.c (the output folder's lock and refusals), mpi_transport.c (MPI
 *                itself: ranks, the fixed-order gradient sum; no jobs).
 *   settings/    the settings: option_table.c (one row per option; --print-config), command_line.c (argv,
 *                --help), config.c (--config JSON), settings_run.c (the checkpoint's /run group), options.c (the
 *                checks before anything is built), lists.c (list-valued options), protocol.c (test sizes,
 *                evaluation sets, fair max_distance, per-position counting), plugin_load.c (--plugin).
 *   plot/        the figures, each written as its .dat and .gp: plot.c (curves, losses), plot_heat.c (heatmaps),
 *                plot_curves.c (positions and over-training curves), plot_style.c (colours and markers), gnuplot.c
 *                (a figure's pair of files, and drawing it: the gnuplot runner).
 *   results/     a report's numbers: table.c (rows and cells), stats.c (t intervals, bootstrap, k/N),
 *                positions.c (per-position counts, report_positions.csv read back), report_load.c (a report read
 *                back as user input).
 *   base/        what every layer shares: types.h (the settings and result records), messages.c (the program's
 *                name, messages, usage errors), files.c (folders, reads that never wait, checked output files),
 *                labels.c (variant names, row labels, run names), clock.c, kill.c (the tests' kill points).
 * A helper that several layers use lives in the lowest layer that needs it, never in a feature file. Each .c has
 * its own header beside it (or its folder's: settings.h, results.h, compare.h) and includes the headers of the
 * names it uses, by their path from src ("engine/run/run.h").
 *
 * NAMES. The engine's internal names start with eng_ (ENG_ for macros): one prefix for one thing, the engine,
 * whichever program (train_order, a user's own main, tools/check_pos) runs it. The installed interface uses
 * rg_engine_ (RG_ENGINE_); the library below it rg_ (RG_).
 */
#ifndef RG_ENGINE_H
#define RG_ENGINE_H

#include <stdbool.h>

#include "../io/checkpoint.h"

/* Runs the experiment the command line describes (argv[0]'s base name names the program in messages, usage and
 * --help; the plugins of --plugin and $ROPEGRAD_PLUGINS are loaded first; argv must be main's argv:
 * on CPUs that Debian's OpenBLAS does not recognize the process re-executes itself once with a faster kernel set,
 * see rg_blas_prefer_fast_kernels). Register the program's tasks before the call. Returns the process exit status:
 * 0 on success, 1 if a run or an output failed (every output that could be written is), 2 on a bad command line
 * (nothing written); --help, --print-config and a bad command line may exit the process from inside the call with
 * those statuses. Under mpirun it also initializes and finalizes MPI. Not reentrant: call it once per process. */
int rg_engine_main(int argc, char **argv);

/* The settings train_order stored in a checkpoint's /run group, for a program that reloads the checkpoint itself
 * (rg_checkpoint_open(path, &m, &opt, &rs), then this call on rs): the run's identity, its training settings and the
 * evaluation settings --eval and --resume use (docs/checkpoint.md lists which come from where). */
#define RG_ENGINE_MAX_LENS 32
#define RG_ENGINE_MAX_SCALINGS 8
typedef struct {
    char task[64];              /* the task's name ("copy"; a registered task's own) */
    int seed, train_len, steps, batch, micro_batches, ckpt_every, log_every, lr_start, max_position;
    bool random_positions;
    int n_test_lens;            /* the test lengths (a grid task's size codes, rg_size_parse) */
    int test_lens[RG_ENGINE_MAX_LENS];
    int n_rope_scaling;         /* the RoPE scaling rows evaluated: type and factor (0: s per test length) */
    rg_rope_ext rope_type[RG_ENGINE_MAX_SCALINGS];
    double rope_factor[RG_ENGINE_MAX_SCALINGS];
    int eval_every, extrap_every;
    char size[32];              /* the run's model size when its grid had a size axis (--sizes): "128x4" (d_model
                                   x n_layers, then hH / fF when the item gave them); "" otherwise */
    char defaulted[128];        /* evaluation settings the file lacks (written before they were stored), comma-
                                   separated, whose defaults were filled in; "" when every one was stored */
} rg_engine_settings;

/* Fills *s from rs (a run state read from a checkpoint train_order wrote), each value checked against the limits of
 * its train_order flag; the task must be registered (rg_task_register) in this program. Returns RG_OK, or
 * RG_ERR_FORMAT with rg_last_error() = "run state: /run KEY ... (allowed: ...)" when a setting is missing, of the
 * wrong type or outside its limits (prefix the message with the file's name); *s is then unspecified. Not
 * thread-safe (it works in static storage). */
rg_status rg_engine_run_settings(const rg_run_state *rs, rg_engine_settings *s);

#endif
