/* kill.h: the test suite's kill points (kill.c). */
#ifndef ENG_BASE_KILL_H
#define ENG_BASE_KILL_H

#include <stdint.h>

/* Test hooks: with TRAIN_ORDER_KILL=WHERE:N in the environment, the invocation's process group is killed with
 * SIGKILL at that point: "train:S" after training step S, "save:S" inside the checkpoint save of step S (its
 * temporary file complete, not yet renamed), "eval:I" after test length I of a run's evaluation, "report:F" after
 * the F-th file of the final report (armed by eng_kill_arm_report; counted by eng_kill_report_file); WHERE:N:RUN
 * only in run RUN (its eng_run_name, set by eng_run through eng_kill_run). */
void eng_kill_point(const char *where, int64_t n);
void eng_kill_run(const char *name);
void eng_kill_arm_report(void);
void eng_kill_report_file(void);

#endif
