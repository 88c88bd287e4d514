/* lm_report.h: the language models' report (lm_report.c). */
#ifndef ENG_VIEWS_LM_REPORT_H
#define ENG_VIEWS_LM_REPORT_H

#include "engine/base/types.h"

/* Aggregates the LM jobs of jobs[0..n_jobs) into <out>/lm_report.{md,csv} and lm_ppl_<task>.svg; nothing without
 * LM jobs. lm_report.md opens with the provenance (report.h: date, commit, CPU, command, wall_seconds: the
 * invocation's). 0, or -1 when a run's file is missing or an output failed (messages on stderr). */
int eng_lm_report(const eng_options *o, const eng_job *jobs, int n_jobs, const char *command, double wall_seconds);

#endif
