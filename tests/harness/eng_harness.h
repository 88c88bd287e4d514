/* eng_harness.h: the harness of the end-to-end tests of examples/train_order (test_train_order.c: runs and
 * reports; test_train_order_input.c: command lines and hostile input; test_mpi.c: its setup and teardown). Each
 * test binary runs its tests in one temporary folder, th_tmpdir, made by th_setup and removed by th_teardown; the program is found through
 * RG_BUILD_DIR (set by tests/run.sh) or build/. */
#ifndef ENG_HARNESS_H
#define ENG_HARNESS_H

#include "common.h"

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define TH_LOGBUF (1 << 14)

extern char th_bin[PATH_MAX];   /* the built train_order */
extern char th_tmpdir[256];     /* this binary's temporary folder */
extern char th_logbuf[TH_LOGBUF]; /* the output (stdout and stderr) of the last th_run / th_run_in */
extern const char *th_exe;      /* the binary run: th_bin, or a copy outside the repository in one test */
extern const char *th_data_env; /* ROPEGRAD_DATA for the child (NULL: unset) */

/* cmocka group setup (finds the binary, makes th_tmpdir), per-test setup (th_exe = th_bin, no ROPEGRAD_DATA) and
 * group teardown (removes th_tmpdir). 0 or -1. */
int th_setup(void **state);
int th_reset(void **state);
int th_teardown(void **state);

/* Runs the program in folder cwd (NULL: this one) with the arguments of fmt: a space-separated list in which ''
 * stands for an empty argument; waits and returns its exit status (-1 if it did not exit), its output in
 * th_logbuf. */
int th_run_in(const char *cwd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define th_run(...) th_run_in(NULL, __VA_ARGS__)
/* Starts the program in the background with its output to the file log; returns its pid (th_wait_rc waits). */
pid_t th_start_bg(const char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int th_wait_rc(pid_t pid);

/* The text of a file into buf (at most cap - 1 bytes; "" if it cannot be read). */
void th_read_text(const char *path, char *buf, size_t cap);
/* Whether dir/name exists and is not empty (a folder counts). */
int th_exists(const char *dir, const char *name);
/* Copies a file (the test fails if it cannot). */
void th_copy_file(const char *from, const char *to);
/* The exact_match and token_acc of the rows of dir/report.csv for one encoding (base variant), as "ext n em acc"
 * lines, into out. */
void th_csv_rows(const char *dir, const char *enc, char *out, size_t cap);
/* The number of newline characters in s. */
int th_count_lines(const char *s);

#endif
