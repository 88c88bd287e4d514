/* eng_harness.c: what the end-to-end tests of examples/train_order share (eng_harness.h): the binary, a temporary
 * folder, starting the program with an argument vector (fork/exec, no shell), reading its files. */
#define _DEFAULT_SOURCE /* realpath */
#include "eng_harness.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char th_bin[PATH_MAX];
char th_tmpdir[256];
char th_logbuf[TH_LOGBUF];
const char *th_exe = th_bin;          /* the binary run (a copy outside the repository in one test) */
const char *th_data_env;           /* ROPEGRAD_DATA for the child (NULL: unset) */

int th_setup(void **state)
{
    const char *bd = getenv("RG_BUILD_DIR");
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/examples/train_order", bd && *bd ? bd : "build");
    if (!realpath(rel, th_bin) || access(th_bin, X_OK) != 0) {
        fprintf(stderr, "%s is missing (make all)\n", rel);
        return -1;
    }
    snprintf(th_tmpdir, sizeof th_tmpdir, "/tmp/rg_train_order_XXXXXX");
    return mkdtemp(th_tmpdir) ? 0 : -1;
}

/* Before each test: the binary under test, no ROPEGRAD_DATA (a failed test may have left others). */
int th_reset(void **state)
{
    th_exe = th_bin;
    th_data_env = NULL;
    return 0;
}

int th_teardown(void **state)
{
    pid_t pid = fork();
    if (pid == 0) { execlp("rm", "rm", "-rf", th_tmpdir, (char *)NULL); _exit(127); }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Starts the program with the arguments: a space-separated list in which '' stands for an empty argument. Runs in
 * folder cwd (NULL: this one), output to `log`. Returns the child's pid. */
static pid_t th_start(const char *cwd, const char *log, const char *fmt, va_list ap)
{
    static char args[1 << 14];
    vsnprintf(args, sizeof args, fmt, ap);
    char *argv[256];
    int argc = 0;
    argv[argc++] = (char *)th_exe;
    for (char *p = strtok(args, " "); p && argc < 255; p = strtok(NULL, " ")) argv[argc++] = strcmp(p, "''") ? p : "";
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || (cwd && chdir(cwd) != 0)) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("RG_KEEP_BLAS_CORE", "1", 1);
        if (th_data_env) setenv("ROPEGRAD_DATA", th_data_env, 1);
        else unsetenv("ROPEGRAD_DATA");
        execv(th_exe, argv);
        _exit(127);
    }
    return pid;
}

int th_wait_rc(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void th_read_text(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* Runs the program (in folder cwd, or here) and returns its exit status; its output is in th_logbuf. */
int th_run_in(const char *cwd, const char *fmt, ...)
{
    char log[512];
    snprintf(log, sizeof log, "%s/log", th_tmpdir);
    va_list ap;
    va_start(ap, fmt);
    pid_t pid = th_start(cwd, log, fmt, ap);
    va_end(ap);
    int rc = th_wait_rc(pid);
    th_read_text(log, th_logbuf, sizeof th_logbuf);
    return rc;
}

/* Starts the program in the background, output to log. */
pid_t th_start_bg(const char *log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pid_t pid = th_start(NULL, log, fmt, ap);
    va_end(ap);
    return pid;
}

int th_exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat s;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &s) == 0 && s.st_size > 0;
}

void th_copy_file(const char *from, const char *to)
{
    static char buf[1 << 20];
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    assert_non_null(f);
    assert_non_null(g);
    size_t n, total = 0; /* in pieces: a sanitizer build of train_order passes 4 MiB */
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        assert_int_equal(fwrite(buf, 1, n, g), n);
        total += n;
    }
    assert_true(total > 0 && !ferror(f));
    fclose(f);
    assert_int_equal(fclose(g), 0);
}

/* The exact_match and token_acc of the rows of report.csv for one encoding (base variant), as "ext n em acc"
 * lines. */
void th_csv_rows(const char *dir, const char *enc, char *out, size_t cap)
{
    char p[1024], line[512];
    snprintf(p, sizeof p, "%s/report.csv", dir);
    FILE *f = fopen(p, "r");
    if (!f) fail_msg("no %s", p);
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char task[32], e[32], var[32], ext[32];
        int seed, n;
        long long steps;
        double loss, secs, em, acc;
        if (sscanf(line, "%31[^,],%31[^,],%31[^,],%31[^,],%d,%lld,%lf,%lf,%d,%lf,%lf", task, e, var, ext, &seed, &steps,
                   &loss, &secs, &n, &em, &acc) == 11 && strcmp(e, enc) == 0 && strcmp(var, "base") == 0) {
            char row[128];
            snprintf(row, sizeof row, "%s %d %.6g %.6g\n", ext, n, em, acc);
            strncat(out, row, cap - strlen(out) - 1);
        }
    }
    fclose(f);
}

int th_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}
