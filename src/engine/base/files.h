/* files.h: the engine's file helpers (files.c): folders, reads that never wait, checked output files. */
#ifndef ENG_BASE_FILES_H
#define ENG_BASE_FILES_H

#include <stdio.h>

#include "engine/base/types.h"

/* fopen(path, "rb") that never waits: a FIFO without a writer reads as empty instead of blocking the open (a
 * pipe with a writer, e.g. --config <(...), still works). NULL with errno set. */
FILE *eng_fopen_read(const char *path);
/* The folder of a file's path into buf: "." for a bare name, "/" for a file at the root. Returns buf. */
const char *eng_folder_of(const char *path, char *buf, size_t n);
/* mkdir -p path. 0 or -1 with a message. */
int eng_make_dir(const char *path);

/* THE TEMPORARY NAME of every file the engine writes whole: "<name>.tmp.<pid>" in the file's own folder, pid the
 * writing process's; eng_out_open, gnuplot's output (gnuplot.c) and the library's rg_atomic_write (checkpoints,
 * results files, invocation.json; io/atomic.h) all use it. eng_tmp_path makes it for path (into buf, n bytes). */
void eng_tmp_path(const char *path, char *buf, size_t n);
/* Removes every file of that pattern of a process that no longer runs in dir, and in each folder below dir down to
 * `depth` levels (symbolic links are not followed): what a killed invocation left. Returns the count removed. */
int eng_remove_stale_tmp(const char *dir, int depth);

/* Checked output files: written under a temporary name, renamed whole when closed. */
typedef struct {
    FILE *f;
    char path[ENG_PATH + 64];   /* the final name */
    char tmp[ENG_PATH + 96];    /* <path>.tmp.<pid> */
    int err;                   /* errno of the first failed write, 0 if none */
} eng_out;

/* Opens <dir>/<name>.tmp.<pid> for writing. Returns 0, or -1 with a message naming the file. */
int eng_out_open(eng_out *w, const char *dir, const char *name);
/* printf to the file; a failure is remembered and reported by eng_out_close. */
void eng_out_printf(eng_out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fflush, fsync, fclose, then renames the temporary file to the final name. Returns 0, or -1 with a message
 * naming the file and the error (the temporary file is removed, an existing file of that name is untouched). */
int eng_out_close(eng_out *w);
/* Closes and removes the temporary file without a message. */
void eng_out_discard(eng_out *w);

#endif
