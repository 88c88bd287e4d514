/* files.h: the engine's file helpers (files.c): folders, reads that never wait, checked output files. */
#ifndef ENG_BASE_FILES_H
#define ENG_BASE_FILES_H

#include <stdio.h>

#include "engine/base/types.h"

/* fopen(path, "rb") that never waits: a FIFO without a writer reads as empty instead of blocking the open (a
 * pipe with a writer, e.g. --config <(...), still works). NULL with errno set. */
FILE *to_fopen_read(const char *path);
/* The folder of a file's path into buf: "." for a bare name, "/" for a file at the root. Returns buf. */
const char *to_folder_of(const char *path, char *buf, size_t n);
/* mkdir -p path. 0 or -1 with a message. */
int to_make_dir(const char *path);

/* Checked output files: written under a temporary name, renamed whole when closed. */
typedef struct {
    FILE *f;
    char path[TO_PATH + 64];   /* the final name */
    char tmp[TO_PATH + 96];    /* <path>.tmp.<pid> */
    int err;                   /* errno of the first failed write, 0 if none */
} to_out;

/* Opens <dir>/<name>.tmp.<pid> for writing. Returns 0, or -1 with a message naming the file. */
int to_out_open(to_out *w, const char *dir, const char *name);
/* printf to the file; a failure is remembered and reported by to_out_close. */
void to_out_printf(to_out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fflush, fsync, fclose, then renames the temporary file to the final name. Returns 0, or -1 with a message
 * naming the file and the error (the temporary file is removed, an existing file of that name is untouched). */
int to_out_close(to_out *w);
/* Closes and removes the temporary file without a message. */
void to_out_discard(to_out *w);

#endif
