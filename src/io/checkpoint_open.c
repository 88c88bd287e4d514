/* checkpoint_open.c: a checkpoint reloaded in one call (rg_checkpoint_open: config -> model -> parameters, and the
 * optimizer and run state when asked) and the learning rate of a run state's schedule (rg_run_state_lr); see
 * checkpoint.h. */
#include "checkpoint.h"

#include <stdio.h>
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
    /* every parameter is replaced by the file's; the table sizes of /config are user input: a model larger than
     * any file this reader accepts is refused before it is allocated */
    if ((st = rg_model_new_within(&cfg, 0, rg_checkpoint_max_params(), m))) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", rg_last_error());
        return rg_error(st == RG_ERR_ARG ? RG_ERR_FORMAT : st, "checkpoint %s: the model of /config cannot be built: "
                        "%s", path, msg);
    }
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
