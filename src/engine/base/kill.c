/* kill.c: the test suite's kill points (TRAIN_ORDER_KILL=WHERE:N): a test kills the invocation at a chosen point
 * (a step, a save, the F-th file of the report) to check that --continue and --resume pick up from there. The
 * training loop, the continue code and the output files all call them, so they sit at the bottom. */
#include "engine/base/kill.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/checkpoint.h"

static int kill_hook(const char *tmp_path)
{
    kill(0, SIGKILL); /* the temporary file is complete, the rename not done: a kill during the save */
    return 0;
}

static char kill_run[128]; /* the run this process works on (eng_kill_run) */

void eng_kill_run(const char *name) { snprintf(kill_run, sizeof kill_run, "%s", name); }

void eng_kill_point(const char *where, int64_t n)
{
    const char *env = getenv("TRAIN_ORDER_KILL");
    size_t len = strlen(where);
    char *end;
    if (!env || strncmp(env, where, len) != 0 || env[len] != ':' || strtoll(env + len + 1, &end, 10) != n ||
        (*end && (*end != ':' || strcmp(end + 1, kill_run))))
        return;
    if (!strcmp(where, "save")) rg_atomic_test_hook_before_rename = kill_hook; /* the next atomic write: the save */
    else kill(0, SIGKILL);
}

static int report_files = -1; /* files of the final report written so far; -1: not armed */

void eng_kill_arm_report(void) { report_files = 0; }

void eng_kill_report_file(void)
{
    if (report_files >= 0) eng_kill_point("report", ++report_files);
}
