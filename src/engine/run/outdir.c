/* outdir.c: the output folder of one invocation. It is created if needed, locked for the whole invocation (flock on
 * <out>/.train_order.lock: a second train_order on the same folder is refused while the first runs), and refused
 * when it already holds results of another invocation (its report, checkpoints or logs) unless --overwrite is given
 * (HF's overwrite_output_dir). --replot gets the same refusal for a folder other than its CSV's own. */
#include "engine/run/outdir.h"
#include "engine/base/files.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_NAME ".train_order.lock"

/* The rank of name among those an invocation writes at the top of its folder (report.md, report.csv, report.json,
 * settings.json, ckpt/, runs/, report_cells.csv, report_positions.csv, invocation.json, results/ (--continue's
 * files), then the plots: extrapolation, curves_<task>,
 * loss_<task>, positions_<task>, over_training_<task> with .svg, .gp, .dat), or
 * -1 for any other name. */
static int result_rank(const char *name)
{
    const char *exact[] = {"report.md", "report.csv", "report.json", "settings.json", "ckpt", "runs",
                           "report_cells.csv", "report_positions.csv", "invocation.json", "results"};
    for (int i = 0; i < (int)(sizeof exact / sizeof *exact); i++)
        if (!strcmp(name, exact[i])) return i;
    const char *stems[] = {"extrapolation.", "curves_", "loss_", "positions_", "over_training_"},
               *exts[] = {".svg", ".gp", ".dat"};
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++) {
        if (strncmp(name, stems[i], strlen(stems[i])) != 0) continue;
        for (size_t j = 0; j < sizeof exts / sizeof *exts; j++)
            if (len > strlen(exts[j]) && !strcmp(name + len - strlen(exts[j]), exts[j])) return 100;
    }
    return -1;
}

/* The most telling of the names an invocation writes that dir holds (its report first), or "" if none (or no
 * dir): other files and subfolders (out/experiment inside out/) are not results of this folder. */
static void first_result(const char *dir, char *name, size_t n)
{
    name[0] = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    int best = -1;
    for (struct dirent *e; (e = readdir(d));) {
        int r = result_rank(e->d_name);
        if (r >= 0 && (best < 0 || r < best || (r == best && strcmp(e->d_name, name) < 0))) {
            best = r;
            snprintf(name, n, "%s", e->d_name);
        }
    }
    closedir(d);
}

/* Whether another train_order holds dir's lock now (without creating the lock file). */
static bool in_use(const char *dir)
{
    char path[ENG_PATH + 64];
    snprintf(path, sizeof path, "%s/%s", dir, LOCK_NAME);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return false;
    bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* releases the probe's lock, if it got one */
    return busy;
}

int eng_outdir_check_replot(const eng_options *o)
{
    char csv_dir[ENG_PATH], entry[256];
    eng_folder_of(o->replot, csv_dir, sizeof csv_dir);
    struct stat a, b;
    bool own = stat(o->out, &a) == 0 && stat(csv_dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    first_result(o->out, entry, sizeof entry);
    if (!own && entry[0] && !o->overwrite) {
        eng_err("--out %s already holds results (%s/%s) and is not the folder of %s; --replot "
                        "there would replace them: choose another --out, or add --overwrite\n", o->out, o->out, entry,
                o->replot);
        return -2;
    }
    if (in_use(o->out)) {
        eng_err("--out %s is in use by another train_order; wait for it or choose another "
                        "--out\n", o->out);
        return -1;
    }
    return eng_make_dir(o->out);
}

int eng_outdir_claim(const eng_options *o)
{
    char path[ENG_PATH + 64], entry[256];
    struct stat st;
    if (stat(o->out, &st) == 0 && !S_ISDIR(st.st_mode)) { /* bad usage, like a folder of other results: exit 2 */
        eng_err("--out %s is a file, not a folder; choose another --out\n", o->out);
        return -2;
    }
    if (eng_make_dir(o->out)) return -1;
    snprintf(path, sizeof path, "%s/%s", o->out, LOCK_NAME);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        eng_err("cannot create the lock file %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        eng_err("--out %s is in use by another train_order (%s is locked); wait for it or "
                        "choose another --out\n", o->out, path);
        close(fd);
        return -1;
    }
    first_result(o->out, entry, sizeof entry);
    if (entry[0] && !o->overwrite && !o->continuing) { /* --continue: this invocation's own results */
        char inv[ENG_PATH + 32];
        snprintf(inv, sizeof inv, "%s/invocation.json", o->out);
        eng_err("--out %s already holds results of another invocation (%s/%s); choose another "
               "--out, or add --overwrite to write into it%s%s%s\n", o->out, o->out, entry,
                access(inv, F_OK) == 0 ? ", or take that invocation up where it stopped with --continue " : "",
                access(inv, F_OK) == 0 ? o->out : "", access(inv, F_OK) == 0 ? " if it was interrupted" : "");
        close(fd);
        return -2;
    }
    char sub[ENG_PATH + 16];
    snprintf(sub, sizeof sub, "%s/ckpt", o->out);
    if (!o->eval[0] && eng_make_dir(sub)) { close(fd); return -1; } /* --eval writes no checkpoint */
    snprintf(sub, sizeof sub, "%s/runs", o->out);
    if (!o->eval[0] && eng_make_dir(sub)) { close(fd); return -1; } /* nor training logs */
    return fd;
}
