/* atomic.c: see atomic.h. */
#include "atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int (*rg_atomic_test_hook_before_rename)(const char *tmp_path) = NULL;

/* The folder of path into dir (n bytes): "." for a bare name, "/" for a file at the root. */
static void folder_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == path) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

int rg_atomic_remove_stale(const char *path)
{
    size_t plen = strlen(path);
    char *dir = malloc(plen + 2), *full = malloc(plen + 64);
    int removed = 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    DIR *d = NULL;
    if (dir && full) {
        folder_of(path, dir, plen + 2);
        d = opendir(dir);
    }
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (strncmp(nm, base, blen) != 0 || strncmp(nm + blen, ".tmp.", 5) != 0) continue;
        const char *num = nm + blen + 5;
        char *end;
        errno = 0;
        long pid = strtol(num, &end, 10);
        if (errno || end == num || *end || num[0] == '+' || num[0] == '-' || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* running, or not ours to check */
        snprintf(full, plen + 64, "%s/%s", dir, nm);
        if (strlen(dir) + 1 + strlen(nm) < plen + 64 && unlink(full) == 0) removed++;
    }
    if (d) closedir(d);
    free(dir);
    free(full);
    return removed;
}

static int write_fully(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        if (w == 0) return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* fsync of a folder. Returns 0 or errno. */
static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    int e = fsync(fd) == 0 ? 0 : errno;
    if (close(fd) != 0 && !e) e = errno;
    return e;
}

rg_status rg_atomic_write(const char *what, const char *path, const void *bytes, size_t n)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 40), *dir = malloc(plen + 2);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return rg_error(RG_ERR_NOMEM, "%s %s: out of memory", what, path);
    }
    snprintf(tmp, plen + 40, "%s.tmp.%ld", path, (long)getpid());
    folder_of(path, dir, plen + 2);
    rg_atomic_remove_stale(path);

    rg_status st = RG_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        st = rg_error(RG_ERR_IO, "%s %s: cannot create the temporary file %s: %s", what, path, tmp, strerror(errno));
        goto done;
    }
    int e = write_fully(fd, bytes, n);
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) {
        st = rg_error(RG_ERR_IO, "%s %s: writing %zu bytes to %s failed%s: %s", what, path, n, tmp,
                      e == ENOSPC || e == EDQUOT ? " (disk full)" : "", strerror(e));
        goto done;
    }
    if (rg_atomic_test_hook_before_rename && rg_atomic_test_hook_before_rename(tmp) != 0) {
        st = rg_error(RG_ERR_IO, "%s %s: simulated failure before renaming %s (test hook)", what, path, tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        st = rg_error(RG_ERR_IO, "%s %s: cannot rename %s over it: %s", what, path, tmp, strerror(errno));
        goto done;
    }
    e = fsync_dir(dir);
    if (e) st = rg_error(RG_ERR_IO, "%s %s: written, but the fsync of its folder %s failed: %s", what, path, dir,
                         strerror(e));
    free(tmp);
    free(dir);
    return st;
done:
    if (fd >= 0) unlink(tmp);
    free(tmp);
    free(dir);
    return st;
}
