/* gnuplot.c: the gnuplot runner: a script's terminal lines for each format, and gnuplot started with fork/exec and an
 * argument vector (no shell) in the output folder, its output written under a temporary name and renamed into place
 * only when complete (the SVG's closing tag, the PDF's %%EOF, the PNG's IEND chunk are present). */
#include "engine/plot/gnuplot.h"
#include "engine/base/files.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The script's opening: the format (fmt = svg | pdf | png, -e "fmt='pdf'"), the output name, and one terminal per
 * format at W x H inches (SVG at 72 px per inch, so that its text has the PDF's size; PNG at 150 dpi). */
void eng_plot_terminal(eng_out *g, const char *base, double w_in, double h_in)
{
    eng_out_printf(g, "if (!exists('fmt')) fmt = 'svg'\nif (!exists('outfile')) outfile = '%s.'.fmt\n"
                     "set encoding utf8\nW = %.2f; H = %.2f  # inches\n"
                     "if (fmt eq 'pdf') {\n  set terminal pdfcairo size W,H noenhanced font '" FONT ",9' linewidth 1\n"
                     "} else { if (fmt eq 'png') {\n  set terminal pngcairo size W*150,H*150 noenhanced font '" FONT
                     ",9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'\n"
                     "} else {\n  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font '"
                     FONT ",9'\n} }\nset output outfile\n", base, w_in, h_in);
}

/* ------------------------------------------------------------------ running gnuplot */

/* Starts gnuplot with argv in dir (stdin and stdout /dev/null): *err_fd reads its stderr, *st_fd an errno when
 * chdir or exec failed (nothing when exec succeeded). Returns the pid, or -1 after a message naming path. */
static pid_t spawn_gnuplot(const char *dir, char *const *argv, const char *path, int *err_fd, int *st_fd)
{
    int errp[2], st[2];
    if (pipe(errp)) { eng_err("cannot draw %s: pipe: %s\n", path, strerror(errno)); return -1; }
    if (pipe(st)) {
        close(errp[0]); close(errp[1]);
        eng_err("cannot draw %s: pipe: %s\n", path, strerror(errno));
        return -1;
    }
    fcntl(st[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* only async-signal-safe calls until exec */
        int e = 0, null = open("/dev/null", O_RDWR);
        if (chdir(dir) != 0) e = errno;
        if (!e && (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(errp[1], 2) < 0)) e = errno;
        if (!e) { execvp("gnuplot", argv); e = errno; }
        ssize_t wr = write(st[1], &e, sizeof e);
        (void)wr;
        _exit(127);
    }
    close(errp[1]);
    close(st[1]);
    if (pid < 0) {
        close(errp[0]); close(st[0]);
        eng_err("cannot draw %s: fork: %s\n", path, strerror(errno));
        return -1;
    }
    *err_fd = errp[0];
    *st_fd = st[0];
    return pid;
}

/* Reads fd to its end into log (cap bytes, NUL-terminated; what does not fit is dropped); returns the length kept. */
static size_t read_log(int fd, char *log, size_t cap)
{
    size_t n_log = 0;
    ssize_t r;
    char chunk[512];
    while ((r = read(fd, chunk, sizeof chunk)) != 0) {
        if (r < 0) { if (errno == EINTR) continue; break; }
        size_t take = (size_t)r < cap - 1 - n_log ? (size_t)r : cap - 1 - n_log;
        memcpy(log + n_log, chunk, take);
        n_log += take;
    }
    log[n_log] = 0;
    return n_log;
}

/* The formats every figure is drawn in, and what the end of a complete file of each holds. */
static const char *const FORMATS[] = {"svg", "pdf", "png"};
#define N_FORMATS 3

/* True if the file at path is complete, synced: a full disk leaves gnuplot's output truncated or empty, and a
 * complete SVG ends with its closing tag, a PDF with %%EOF, a PNG with its IEND chunk (then 4 bytes of CRC). */
static bool complete_output(const char *path, int format)
{
    static const char *const tail_mark[N_FORMATS] = {"</svg>", "%%EOF", "IEND"};
    int fd = open(path, O_RDWR), ok = 0;
    char tail[64] = "";
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 16) {
        off_t at = sb.st_size > 63 ? sb.st_size - 63 : 0;
        ssize_t k = pread(fd, tail, 63, at);
        k = k > 0 ? k : 0;
        for (ssize_t i = 0; i < k; i++) tail[i] = tail[i] ? tail[i] : ' '; /* PNG bytes: search as text */
        tail[k] = 0;
        ok = strstr(tail, tail_mark[format]) != NULL && fsync(fd) == 0;
    }
    if (fd >= 0) close(fd);
    return ok;
}

/* Runs `gnuplot -e "fmt='<format>'; outfile='<name>.tmp.<pid>'" <script>` in dir, checks the output is complete,
 * renames it to <name>. Returns 0, 1 when gnuplot is not installed, -1 on failure (message on stderr). */
static int run_gnuplot(const char *dir, const char *script, const char *name, int format)
{
    char tmp[640], expr[700], path[ENG_PATH + 640], tmp_path[ENG_PATH + 640];
    eng_tmp_path(name, tmp, sizeof tmp); /* the engine's temporary name (files.h): --continue removes it */
    snprintf(expr, sizeof expr, "fmt='%s'; outfile='%s'", FORMATS[format], tmp); /* our names only: [a-z0-9_.-] */
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp_path, sizeof tmp_path, "%s/%s", dir, tmp);
    char *const argv[] = {"gnuplot", "-e", expr, (char *)script, NULL};
    int err_fd, st_fd;
    pid_t pid = spawn_gnuplot(dir, argv, path, &err_fd, &st_fd);
    if (pid < 0) return -1;
    char log[2048];
    size_t n_log = read_log(err_fd, log, sizeof log);
    close(err_fd);
    int exec_err = 0;
    if (read(st_fd, &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err) exec_err = 0;
    close(st_fd);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (exec_err == ENOENT) return 1;
    if (exec_err) {
        eng_err("cannot draw %s: starting gnuplot: %s\n", path, strerror(exec_err));
        return -1;
    }
    int exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    int ok = exited_ok && complete_output(tmp_path, format);
    if (ok && rename(tmp_path, path) == 0) return 0;
    int e = errno;
    remove(tmp_path);
    eng_err("cannot write %s: gnuplot's output is %s%s%s\n", path,
            exited_ok ? "incomplete (disk full?)" : "missing (gnuplot failed)", n_log ? "; gnuplot said:\n" : "",
            n_log ? log : (ok ? strerror(e) : ""));
    return -1;
}

int eng_gnuplot(const char *dir, const char *script, const char *base)
{
    for (int f = 0; f < N_FORMATS; f++) {
        char name[600];
        snprintf(name, sizeof name, "%.63s.%s", base, FORMATS[f]);
        int rc = run_gnuplot(dir, script, name, f);
        if (rc) return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ a figure's files, and drawing it */

int eng_plot_pair_open(const char *dir, const char *base, eng_out *dat, eng_out *gp)
{
    char name[160];
    snprintf(name, sizeof name, "%.150s.dat", base);
    if (eng_out_open(dat, dir, name)) return -1;
    snprintf(name, sizeof name, "%.150s.gp", base);
    if (eng_out_open(gp, dir, name)) { eng_out_discard(dat); return -1; }
    return 0;
}

int eng_plot_pair_close(eng_out *dat, eng_out *gp)
{
    if (eng_out_close(dat)) { eng_out_discard(gp); return -1; }
    return eng_out_close(gp);
}

void eng_plot_pair_discard(eng_out *dat, eng_out *gp)
{
    eng_out_discard(dat);
    eng_out_discard(gp);
}

int eng_plot_draw(eng_plot_pen *pen, int written, const char *base)
{
    if (written < 0) return -1;
    if (written == 0 || pen->no_gnuplot) return 0;
    char script[200];
    snprintf(script, sizeof script, "%.150s.gp", base);
    int rc = eng_gnuplot(pen->dir, script, base); /* every format, the first failure's status */
    if (rc < 0) return -1;
    if (rc == 1) {
        pen->no_gnuplot = true;
        eng_err("warning: gnuplot is not installed: no plots (their data and scripts are in %s: *.dat, *.gp; "
                "apt-get install gnuplot-nox)\n", pen->dir);
        if (pen->said) fprintf(pen->said, "%s: wrote the plots' data and scripts (no gnuplot): %s/*.dat, *.gp\n",
                               eng_prog(), pen->dir);
        return 0;
    }
    if (pen->said) fprintf(pen->said, "%s: wrote %s/%s.svg, .pdf, .png (data %s.dat, script %s.gp)\n", eng_prog(),
                           pen->dir, base, base, base);
    return 0;
}
