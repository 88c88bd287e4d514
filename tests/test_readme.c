/* test_readme.c: the README's compile line for a user's own script builds and runs examples/train_tiny.c.
 *
 * The line is read from README.md (the first `cc -std=c11 ...` in backticks) and run as written by /bin/sh (it
 * holds $(pkg-config ...)), with RG set to this checkout, my_train.c replaced by examples/train_tiny.c and
 * $RG/build/ by the build folder of this test (RG_BUILD_DIR, as tests/run.sh sets it). The library went from
 * OpenBLAS alone to libxsmm + OpenBLAS, and the README's line stopped linking (undefined libxsmm_smmdispatch)
 * without any test noticing. Skipped under the sanitizers: their library needs the sanitizer's link flags. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "common.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Replaces every `from` in s (capacity cap) by `to`; false if it does not fit. */
static bool replace_all(char *s, size_t cap, const char *from, const char *to)
{
    char out[4096] = "", *p = s, *hit;
    size_t n = 0;
    while ((hit = strstr(p, from))) {
        n += (size_t)snprintf(out + n, n < sizeof out ? sizeof out - n : 0, "%.*s%s", (int)(hit - p), p, to);
        p = hit + strlen(from);
    }
    n += (size_t)snprintf(out + n, n < sizeof out ? sizeof out - n : 0, "%s", p);
    if (n >= sizeof out || n >= cap) return false;
    memcpy(s, out, n + 1);
    return true;
}

static int run_argv(char *const argv[], const char *rg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("RG", rg, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_readme_compile_line(void **state)
{
#if defined(__SANITIZE_ADDRESS__)
    skip();
#endif
    static char text[1 << 17];
    FILE *f = fopen("README.md", "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *start = strstr(text, "`cc -std=c11");
    if (!start) fail_msg("README.md has no `cc -std=c11 ...` compile line");
    start++;
    char *end = strchr(start, '`');
    assert_non_null(end);
    char line[4096], rg[PATH_MAX], build[PATH_MAX], lib_dir[PATH_MAX + 8], tmp[] = "/tmp/rg_readme_XXXXXX";
    snprintf(line, sizeof line, "%.*s", (int)(end - start), start);
    const char *bd = getenv("RG_BUILD_DIR");
    assert_non_null(getcwd(rg, sizeof rg));
    if (!realpath(bd && *bd ? bd : "build", build)) fail_msg("no build folder (make all)");
    snprintf(lib_dir, sizeof lib_dir, "%s/", build);
    assert_non_null(mkdtemp(tmp));
    char exe[sizeof tmp + 16], cmd[4400];
    snprintf(exe, sizeof exe, "%s/my_train", tmp);
    if (!replace_all(line, sizeof line, "$RG/build/", lib_dir) ||
        !replace_all(line, sizeof line, "my_train.c", "examples/train_tiny.c"))
        fail_msg("README compile line too long");
    snprintf(cmd, sizeof cmd, "%s -o %s", line, exe);
    print_message("README: %s\n", cmd);
    int rc = run_argv((char *[]){"/bin/sh", "-c", cmd, NULL}, rg);
    if (rc != 0) fail_msg("the README's compile line exited %d", rc);
    rc = run_argv((char *[]){exe, NULL}, rg);
    unlink(exe);
    rmdir(tmp);
    if (rc != 0) fail_msg("train_tiny built with the README's line exited %d", rc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_readme_compile_line)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
