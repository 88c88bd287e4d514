/* settings.h: the settings (option_table.c: the table, --print-config; command_line.c; config.c: --config;
 * settings_run.c: the checkpoint's /run group; options.c: the checks). */
#ifndef ENG_SETTINGS_SETTINGS_H
#define ENG_SETTINGS_SETTINGS_H

#include <stdio.h>

#include "engine/base/types.h"

/* Defaults of every option. */
void eng_options_default(eng_options *o);
/* Parses the command line into o (after eng_options_default): --config FILE first, then the flags, which win.
 * Exact option names only (an abbreviation is refused); an option that does not apply to the mode (--lr with
 * --eval) is refused. Exits 2 with a message on a bad command line. */
void eng_options_parse(int argc, char **argv, eng_options *o);
/* Applies a JSON object of settings (the text --print-config writes, as a report's Settings hold it) to o, as
 * --config does; exits 2 with a message starting with src ("--combine FILE: settings") on an invalid one. */
void eng_options_apply_config(eng_options *o, const char *text, const char *src);
/* Prints the resolved settings as JSON (the format --config reads). */
void eng_options_print(const eng_options *o, FILE *f);
/* The same JSON text, malloc'ed (free it), for the report (report.md / report.json); NULL when out of memory. */
char *eng_options_json(const eng_options *o);
/* ------------------------------------------------------------------ settings_run.c: the checkpoint's /run group */
/* Writes the settings that a resume or --eval must reuse into the run state's /run group (one loop over the table):
 * the run's task (string) and seed, train_len, the training settings (integers). 0, or -1 (rg_last_error). */
int eng_settings_to_run(const eng_options *o, rg_task task, int seed, rg_run_state *rs);
/* Reads the settings of checkpoint ckpt (its /run group, /optim schedule and config) into o, each validated
 * against the limits of its flag: the /run rows of the table, among them the run's task (o->tasks, one), seed
 * (o->seed_list[0], n_seeds 1) and train_len. A missing or wrongly typed value is an error naming the checkpoint
 * (a file written before task, train_len and seed moved to /run is refused so). Exits 2 with a message naming the
 * checkpoint and the value. */
void eng_settings_from_checkpoint(eng_options *o, const char *ckpt, const rg_model_config *cfg, const rg_run_state *rs);
/* The same /run values (the table's /run rows and the evaluation settings test_lens, rope_scaling, eval_every,
 * extrap_every; the defaults for those a checkpoint written before they were stored lacks) into o, returning instead
 * of exiting: 0, or -1 with err = "/run KEY ... (allowed: ...)" (the caller names the file). Used by --continue and
 * rg_engine_run_settings. */
int eng_settings_read_run(eng_options *o, const rg_run_state *rs, char *err, size_t cap);
/* Where the settings of the last eng_settings_from_checkpoint came from, one line of text for the report: the
 * checkpoint's keys, those the command line or --config gave, those the checkpoint lacks (defaults). "" when no
 * checkpoint was read. Returns buf. */
const char *eng_settings_sources(char *buf, size_t cap);
/* The optimizer settings a checkpoint loaded into opt (beta1, beta2, eps, weight_decay), checked against the limits
 * of their flags. 0, or -1 with a message naming the checkpoint. */
int eng_settings_check_optim(const rg_adamw *opt, const char *ckpt);

/* ------------------------------------------------------------------ options.c: the checks */

/* Everything that can be checked before anything is built: modes, paths, the checkpoint's settings, the model
 * config, the data file. Exits 2 with a message when the command line (or the checkpoint it names) is unusable. */
void eng_options_check(eng_options *o);

/* The settings a run stored in its run state rs (its /run group; eng_settings_read_run) into o, after the
 * defaults; defaulted gets the evaluation settings rs lacks (written before they were stored), comma-separated.
 * 0, or -1 with the reason in err. */
int eng_settings_stored(const rg_run_state *rs, eng_options *o, char *defaulted, size_t cap, char *err, size_t errcap);

#endif
