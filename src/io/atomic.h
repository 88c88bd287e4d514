/* atomic.h: one atomic file replacement, shared by the checkpoints and the evaluation-set file.
 *
 * rg_atomic_write(path, ...) puts bytes under `path` so that `path` is always either the old file or the complete
 * new one, also after a crash or kill -9 at any point:
 *   1. stale temporary files "<path>.tmp.<pid>" of processes that no longer exist (killed saves) are removed;
 *   2. the bytes are written to "<path>.tmp.<pid>" in the same folder (open O_CREAT | O_TRUNC, write, fsync,
 *      close: a full disk is reported here, with strerror's text);
 *   3. the test hook (below) is called;
 *   4. rename(tmp, path): atomic on POSIX file systems;
 *   5. fsync of the folder, so that the rename itself is durable.
 * Any failure in 2-4 removes the temporary file and leaves an existing `path` untouched.
 *
 * Errors (rg_last_error() = "<what> <path>: ..."): RG_ERR_IO (folder missing or not writable, write/fsync/rename
 * failure, disk full; the temporary file's name and strerror's text in the message; "written, but the fsync of
 * its folder ... failed" when only step 5 failed: the new file is then in place), RG_ERR_NOMEM. */
#ifndef RG_IO_ATOMIC_H
#define RG_IO_ATOMIC_H

#include <stddef.h>

#include "../tensor/tensor.h"

rg_status rg_atomic_write(const char *what, const char *path, const void *bytes, size_t n);

/* Removes the files "<path>.tmp.<pid>" of the folder of path whose pid names no running process (kill(pid, 0)
 * fails with ESRCH); files of running processes, other names and other pids' files that cannot be checked are left
 * alone. Returns the number removed. Called by rg_atomic_write; exposed for tests. */
int rg_atomic_remove_stale(const char *path);

/* Test hook (tests only; NULL in normal use): called with the temporary file's path after it is complete and
 * fsync'ed, just before the rename; a nonzero return simulates a failure there (the temporary file is removed and
 * RG_ERR_IO "simulated failure" returned). */
extern int (*rg_atomic_test_hook_before_rename)(const char *tmp_path);

#endif
