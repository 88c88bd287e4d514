/* outdir.c: the output folder of one invocation. It is created if needed, locked for the whole invocation (flock on
 * <out>/.train_order.lock: a second train_order on the same folder is refused while the first runs), and refused
 * when it already holds results of another invocation (its report, checkpoints or logs) unless --overwrite is given
 * (HF's overwrite_output_dir). */
#include "train_order.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_NAME ".train_order.lock"

int to_make_dir(const char *path)
{
    char buf[TO_PATH + 64];
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
    fprintf(stderr, "train_order: cannot create %s: %s\n", path, strerror(errno));
    return -1;
}

/* The first of the names an invocation writes at the top of its folder (report.*, the plot, settings.json, ckpt/,
 * runs/) that dir
 * holds, or "" if none: other files and subfolders (out/experiment inside out/) are not results of this folder. */
static void first_result(const char *dir, char *name, size_t n)
{
    const char *ours[] = {"report.md", "report.csv", "report.json", "extrapolation.svg", "settings.json", "ckpt",
                          "runs"};
    name[0] = 0;
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++) {
        char p[TO_PATH + 32];
        struct stat s;
        snprintf(p, sizeof p, "%s/%s", dir, ours[i]);
        if (lstat(p, &s) == 0) { snprintf(name, n, "%s", ours[i]); return; }
    }
}

int to_outdir_claim(const to_options *o)
{
    char path[TO_PATH + 64], entry[256];
    struct stat st;
    if (stat(o->out, &st) == 0 && !S_ISDIR(st.st_mode)) { /* bad usage, like a folder of other results: exit 2 */
        fprintf(stderr, "train_order: --out %s is a file, not a folder; choose another --out\n", o->out);
        return -2;
    }
    if (to_make_dir(o->out)) return -1;
    snprintf(path, sizeof path, "%s/%s", o->out, LOCK_NAME);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "train_order: cannot create the lock file %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "train_order: --out %s is in use by another train_order (%s is locked); wait for it or "
                        "choose another --out\n", o->out, path);
        close(fd);
        return -1;
    }
    first_result(o->out, entry, sizeof entry);
    if (entry[0] && !o->overwrite) {
        fprintf(stderr, "train_order: --out %s already holds results of another invocation (%s/%s); choose another "
                        "--out, or add --overwrite to write into it\n", o->out, o->out, entry);
        close(fd);
        return -2;
    }
    char sub[TO_PATH + 16];
    snprintf(sub, sizeof sub, "%s/ckpt", o->out);
    if (!o->eval[0] && to_make_dir(sub)) { close(fd); return -1; } /* --eval writes no checkpoint */
    snprintf(sub, sizeof sub, "%s/runs", o->out);
    if (to_make_dir(sub)) { close(fd); return -1; }
    return fd;
}
