/* outdir.h: the output folder of one invocation (outdir.c). */
#ifndef ENG_RUN_OUTDIR_H
#define ENG_RUN_OUTDIR_H

#include "engine/base/types.h"

/* Creates o->out (mkdir -p), takes its lock (flock on <out>/.train_order.lock, held until exit) and refuses a
 * folder that already holds results of another invocation (report.*, settings.json, ckpt/, runs/, the plots
 * extrapolation.*, curves_*, loss_*) unless o->overwrite. Returns the lock's descriptor; -2 (bad usage: exit 2) for
 * a folder holding results or a file named like the folder; -1 with a message otherwise (in use, cannot create). */
int eng_outdir_claim(const eng_options *o);
/* For --replot: refuses (-2, bad usage) an --out other than the CSV's own folder that holds results of another
 * report, unless o->overwrite; refuses (-1) a folder whose lock another train_order holds (probed without creating
 * the lock file); then creates the folder. 0, -1 or -2, with a message. */
int eng_outdir_check_replot(const eng_options *o);

#endif
