/* checkpoint_open.c: a checkpoint reloaded in one call (rg_checkpoint_open: config -> model -> parameters, and the
 * optimizer and run state when asked) and the learning rate of a run state's schedule (rg_run_state_lr); see
 * checkpoint.h. */
#include "checkpoint.h"

#include <string.h>

double rg_run_state_lr(const rg_run_state *rs)
{
    const rg_lr_state *l = &rs->lr;
    if (l->step >= l->total) return l->peak * l->min_frac;
    return rg_lr_schedule(l->step, l->peak, l->warmup, l->total, l->min_frac);
}

rg_status rg_checkpoint_open(const char *path, rg_model **m, rg_adamw *opt, rg_run_state *rs)
{
    *m = NULL;
    if (opt) memset(opt, 0, sizeof *opt);
    rg_model_config cfg;
    rg_status st = rg_checkpoint_read_config(path, &cfg, NULL);
    if (st) return st;
    if ((st = rg_model_new(&cfg, 0, m))) return st; /* every parameter is replaced by the file's */
    /* AdamW's settings are the file's (rg_checkpoint_load replaces them); these only size the moments */
    if (opt && (st = rg_adamw_init(opt, &(*m)->params, 0.9, 0.999, 1e-8, 0.0))) goto fail;
    if ((st = rg_checkpoint_load(path, *m, opt, rs))) goto fail;
    return RG_OK;
fail:
    if (opt) {
        rg_adamw_free(opt);
        memset(opt, 0, sizeof *opt);
    }
    rg_model_free(*m);
    *m = NULL;
    return st;
}
