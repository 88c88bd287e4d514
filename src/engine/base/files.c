/* files.c: the engine's file helpers: folders (mkdir -p, the folder of a path), a read that never waits on a FIFO,
 * checked output files (written to a temporary name and renamed whole, so that a reader never sees half a file),
 * and the temporary names themselves (made, and those of killed processes removed for --continue). Every layer that writes or reads files uses them, so they sit at the bottom. */
#include "engine/base/files.h"
#include "engine/base/kill.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "io/atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int eng_make_dir(const char *path)
{
    char buf[ENG_PATH + 64];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) break;
        *p = '/';
    }
    struct stat st;
    if (mkdir(buf, 0755) == 0 || (errno == EEXIST && stat(buf, &st) == 0 && S_ISDIR(st.st_mode))) return 0;
    if (errno == EEXIST) errno = ENOTDIR; /* a file of that name: mkdir's EEXIST would read as success */
    eng_err("cannot create %s: %s\n", path, strerror(errno));
    return -1;
}

const char *eng_folder_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, n, ".");
    else snprintf(buf, n, "%.*s", (int)(slash - path + (slash == path)), path);
    return buf;
}

FILE *eng_fopen_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), flags;
    if (fd < 0) return NULL;
    FILE *f = NULL;
    if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1 || !(f = fdopen(fd, "rb")))
        close(fd);
    return f;
}

void eng_tmp_path(const char *path, char *buf, size_t n) { snprintf(buf, n, "%s.tmp.%ld", path, (long)getpid()); }

int eng_remove_stale_tmp(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[ENG_PATH + 300];
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path || lstat(path, &st) != 0)
            continue;
        const char *tmp = strstr(e->d_name, ".tmp.");
        if (S_ISDIR(st.st_mode) && depth > 0) removed += eng_remove_stale_tmp(path, depth - 1);
        else if (S_ISREG(st.st_mode) && tmp) { /* <name>.tmp.<pid>: only files of dead processes, only that name */
            path[strlen(dir) + 1 + (size_t)(tmp - e->d_name)] = 0;
            removed += rg_atomic_remove_stale(path);
        }
    }
    if (d) closedir(d);
    return removed;
}

int eng_out_open(eng_out *w, const char *dir, const char *name)
{
    memset(w, 0, sizeof *w);
    if (snprintf(w->path, sizeof w->path, "%s/%s", dir, name) >= (int)sizeof w->path) {
        eng_err("output path too long: %s/%s\n", dir, name);
        return -1;
    }
    eng_tmp_path(w->path, w->tmp, sizeof w->tmp);
    w->f = fopen(w->tmp, "w");
    if (!w->f) {
        eng_err("cannot write %s: %s\n", w->path, strerror(errno));
        return -1;
    }
    return 0;
}

void eng_out_printf(eng_out *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(w->f, fmt, ap) < 0 && !w->err) w->err = errno ? errno : EIO;
    va_end(ap);
}

int eng_out_close(eng_out *w)
{
    int e = w->err;
    if (fflush(w->f) != 0 && !e) e = errno;
    if (ferror(w->f) && !e) e = EIO;
    if (fsync(fileno(w->f)) != 0 && !e && errno != EINVAL) e = errno; /* EINVAL: a file that cannot be synced */
    if (fclose(w->f) != 0 && !e) e = errno;
    w->f = NULL;
    if (!e && rename(w->tmp, w->path) != 0) e = errno;
    if (e) {
        remove(w->tmp);
        eng_err("cannot write %s: %s\n", w->path, strerror(e));
        return -1;
    }
    eng_kill_report_file(); /* tests only (continue.c) */
    return 0;
}

void eng_out_discard(eng_out *w)
{
    if (w->f) fclose(w->f);
    w->f = NULL;
    remove(w->tmp);
}
