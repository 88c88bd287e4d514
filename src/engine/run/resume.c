/* resume.c: what one run keeps for a resume and where a continued run resumes from: the settings digest that marks
 * a run's files, the training loop's loss window in the run state and its check, and the checkpoint a continued
 * invocation's run resumes from. The training loop (run.c) and --continue (continue.c) both use them. */
#include "engine/run/resume.h"
#include "engine/base/labels.h"
#include "engine/base/types.h"
#include "engine/settings/settings.h"
#include "io/guard.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint32_t eng_settings_digest(const eng_options *o)
{
    static eng_options d;
    d = *o; /* how and where the invocation runs is not what it computes */
    d.jobs = 1;
    d.quiet = d.overwrite = d.continuing = false;
    snprintf(d.out, sizeof d.out, ".");
    char *text = eng_options_json(&d);
    uint32_t crc = text ? rg_crc32(0, text, strlen(text)) : 0;
    cJSON_free(text);
    return crc;
}

int eng_loss_window_store(rg_run_state *rs, double sum, int64_t steps, double row)
{
    if (rg_run_state_set_double(rs, "loss_window_sum", sum) || rg_run_state_set_int(rs, "loss_window_steps", steps))
        return -1;
    return isfinite(row) ? (rg_run_state_set_double(rs, "loss_row", row) ? -1 : 0) : 0;
}

void eng_loss_window_load(const rg_run_state *rs, double *sum, int64_t *steps, double *row)
{
    const rg_run_attr *s = rg_run_state_attr(rs, "loss_window_sum"), *n = rg_run_state_attr(rs, "loss_window_steps"),
                      *r = rg_run_state_attr(rs, "loss_row");
    *sum = s && s->type == RG_RUN_ATTR_DOUBLE ? s->d : 0;
    *steps = n && n->type == RG_RUN_ATTR_INT ? n->i : 0;
    *row = r && r->type == RG_RUN_ATTR_DOUBLE ? r->d : NAN;
}

int eng_run_check_state(const rg_run_state *rs, const eng_options *ov, char *why, size_t cap)
{
    const rg_run_attr *a = rg_run_state_attr(rs, "steps_to_learn"), *s = rg_run_state_attr(rs, "loss_window_sum"),
                      *n = rg_run_state_attr(rs, "loss_window_steps"), *r = rg_run_state_attr(rs, "loss_row");
    why[0] = 0;
    if (a && (a->type != RG_RUN_ATTR_INT || a->i < -1 || a->i == 0 || a->i > rs->step))
        snprintf(why, cap, "/run steps_to_learn is not -1 or a step from 1 to the checkpoint's step %lld",
                 (long long)rs->step);
    else if (!s || s->type != RG_RUN_ATTR_DOUBLE || !isfinite(s->d) || !n || n->type != RG_RUN_ATTR_INT ||
             n->i < 0 || n->i > ov->log_every || n->i > rs->step || (r && (r->type != RG_RUN_ATTR_DOUBLE ||
             !isfinite(r->d))))
        snprintf(why, cap, "/run loss_window_sum, loss_window_steps or loss_row is missing or outside its range (a "
                 "finite sum over 0..%d steps, a finite last row)", ov->log_every);
    return why[0] ? -1 : 0;
}

void eng_continue_resume_source(eng_options *ov, const eng_job *job)
{
    char name[128], ckpt[ENG_PATH + 160];
    eng_run_name(job->task, job->pos, eng_variant_of(ov, job->pos), ov->n_sizes ? ov->sizes[0].text : NULL, job->seed,
                 name, sizeof name);
    snprintf(ckpt, sizeof ckpt, "%.*s/ckpt/%s.h5", ENG_PATH - 1, ov->out, name);
    size_t n = strlen(ckpt);
    if (access(ckpt, F_OK) == 0 && n < sizeof ov->resume) memcpy(ov->resume, ckpt, n + 1);
}
