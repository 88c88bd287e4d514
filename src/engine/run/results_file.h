/* results_file.h: a finished run's results file (results_file.c). */
#ifndef ENG_RUN_RESULTS_FILE_H
#define ENG_RUN_RESULTS_FILE_H

#include "engine/base/types.h"

/* <out>/results/<name>.bin into buf. */
void eng_results_path(const eng_options *o, const char *name, char *buf, size_t cap);
/* Writes the n result records of run `name` atomically to its results file (the folder made if needed), marked with
 * digest (eng_settings_digest of the invocation). 0, or -1 with a message naming the file. */
int eng_results_save(const eng_options *o, uint32_t digest, const char *name, const eng_result *res, int n);
/* Reads the results file at path as job j's under settings o (the job's variant applied: eng_run_options): format,
 * version and record size, exact length, CRC-32, the invocation's digest, and every record checked against the run
 * (its row, test lengths, steps, ranges of scores and counts). Returns the number of records written to res (room
 * for 1 + ENG_MAX_EXTS), or -1 with why (what is wrong, for a message naming the file). */
int eng_results_load(const eng_options *o, uint32_t digest, const eng_job *j, const char *path, eng_result *res,
                    char *why, size_t cap);

#endif
