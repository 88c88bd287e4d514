/* test_install.c: `make install` into a temporary prefix (a fresh /tmp/rg_install_XXXXXX, removed afterwards) and a
 * program built against the installed copy the way a user builds one: examples/custom_task.c and the encoding it
 * includes, examples/alibi_learned.h, copied out of the repository and compiled with `pkg-config --cflags --libs
 * ropegrad` (no -I or -L into the repository), linked to the shared library by its soname. The program registers a
 * user task (recall) and a user encoding (alibi-learned) and runs the engine for a few steps with their rows beside
 * built-in ones (--task recall,copy --pos alibi-learned,rope; copy's set read from the installed data file):
 * report.csv has the four task x encoding cells at both lengths, report.md and report.json name them; the
 * recall/alibi-learned checkpoint reloaded with --eval in the same program gives the trained run's exact match and
 * token accuracy at each length (same weights, same evaluation sets). Also: the float32/float64 guard (float32 headers with
 * libropegrad_f64.a, and the reverse, fail to link naming the guard symbol; `pkg-config ropegrad-f64` links and runs
 * the float64 build), and `make uninstall` leaves no file behind. Every command runs with an argument vector (no
 * shell); the sub-make gets the build folder of the suite (RG_BUILD_DIR) and copies what is built. The example
 * plugin runs in the installed train_order (test_plugin_in_installed_train_order). */
#define _DEFAULT_SOURCE /* realpath */
#include "common.h"

#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "version.h"

static char tmp[256], prefix[320], build_dir[256], out[1 << 16];
static char pc_path[400], ld_path[400];

/* Runs argv with PKG_CONFIG_PATH and LD_LIBRARY_PATH pointing into the prefix and no inherited MAKEFLAGS; stdout and
 * stderr into `out`. Returns the exit status (-1 if it did not exit). */
static int run(char *const argv[])
{
    int fd[2];
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        unsetenv("MAKEFLAGS");
        unsetenv("MFLAGS");
        unsetenv("MAKELEVEL");
        setenv("PKG_CONFIG_PATH", pc_path, 1);
        setenv("LD_LIBRARY_PATH", ld_path, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t k;
    while ((k = read(fd[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)k;
    out[n] = 0;
    close(fd[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

/* Splits s (pkg-config's output) at blanks into argv[*argc..]. */
static void split_into(char *s, char **argv, int *argc, int cap)
{
    for (char *p = strtok(s, " \t\n"); p && *argc < cap - 1; p = strtok(NULL, " \t\n")) argv[(*argc)++] = p;
}

/* The -fsanitize flags of the suite's build (a sanitizer build's libraries need them in the program too). */
static void sanitizer_flags(char *buf, size_t cap, char **argv, int *argc, int argcap)
{
    char path[300];
    snprintf(path, sizeof path, "%s/flags", build_dir);
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (!fgets(buf, (int)cap, f)) buf[0] = 0;
    fclose(f);
    for (char *p = strtok(buf, " \n"); p && *argc < argcap - 1; p = strtok(NULL, " \n"))
        if (strncmp(p, "-fsanitize", 10) == 0 || strcmp(p, "-fno-omit-frame-pointer") == 0) argv[(*argc)++] = p;
}

static int setup(void **state)
{
    const char *bd = getenv("RG_BUILD_DIR");
    snprintf(build_dir, sizeof build_dir, "%s", bd && *bd ? bd : "build");
    snprintf(tmp, sizeof tmp, "/tmp/rg_install_XXXXXX");
    if (!mkdtemp(tmp)) return -1;
    snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
    snprintf(pc_path, sizeof pc_path, "%s/lib/pkgconfig", prefix);
    snprintf(ld_path, sizeof ld_path, "%s/lib", prefix);
    return 0;
}

static int teardown(void **state)
{
    char *argv[] = {"rm", "-rf", tmp, NULL};
    return run(argv) == 0 ? 0 : -1;
}

static void must_exist(const char *rel)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", prefix, rel);
    if (access(p, F_OK)) fail_msg("the install lacks %s", p);
}

/* Rows of dir/report.csv that start with prefix. */
static int count_rows(const char *dir, const char *prefix_text)
{
    char csv[600], line[512];
    snprintf(csv, sizeof csv, "%s/report.csv", dir);
    FILE *f = fopen(csv, "r");
    if (!f) fail_msg("no %s", csv);
    int rows = 0;
    while (fgets(line, sizeof line, f)) rows += strncmp(line, prefix_text, strlen(prefix_text)) == 0;
    fclose(f);
    return rows;
}

/* The "n,exact_match,token_acc," fields of dir/report.csv's rows that start with prefix, one after the other. */
static void row_metrics(const char *dir, const char *prefix_text, char *buf, size_t cap)
{
    char csv[600], line[512];
    snprintf(csv, sizeof csv, "%s/report.csv", dir);
    FILE *f = fopen(csv, "r");
    if (!f) fail_msg("no %s", csv);
    buf[0] = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, prefix_text, strlen(prefix_text))) continue;
        char *p = line;
        for (int comma = 0; comma < 8 && p; comma++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        char *q = p;
        for (int comma = 0; comma < 3 && q; comma++) q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL;
        if (!p || !q) fail_msg("%s: a short row: %s", csv, line);
        snprintf(buf + strlen(buf), cap - strlen(buf), "%.*s", (int)(q - p), p);
    }
    fclose(f);
}

/* file dir/name holds text */
static void file_has(const char *dir, const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("no %s", path);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    fclose(f);
    if (!strstr(out, text)) fail_msg("%s does not name %s", path, text);
}

static void test_install_and_build_against_it(void **state)
{
    char pf[400], bdarg[300];
    snprintf(pf, sizeof pf, "PREFIX=%s", prefix);
    snprintf(bdarg, sizeof bdarg, "BUILD=%s", build_dir);
    char *make[] = {"make", "-s", "--no-print-directory", "install-files", pf, bdarg, NULL};
    if (run(make)) fail_msg("make install-files failed:\n%s", out);
    const char *files[] = {"include/ropegrad/ropegrad.h", "include/ropegrad.h", "include/ropegrad/version.h",
                           "include/ropegrad/nn/generate.h", "include/ropegrad/task/task.h",
                           "include/ropegrad/engine/engine.h", "lib/libropegrad.a", "lib/libropegrad_f64.a",
                           "lib/libropegrad_tasks.a", "lib/libropegrad_engine.a", "lib/libropegrad.so",
                           "lib/libropegrad.so." RG_VERSION, "lib/pkgconfig/ropegrad.pc",
                           "lib/pkgconfig/ropegrad-f64.pc", "bin/train_order", "bin/rg_check_pos",
                           "share/ropegrad/eval_sets.h5"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) must_exist(files[i]);
    char so[500];
    snprintf(so, sizeof so, "%s/lib/libropegrad.so", prefix);
    char *readelf[] = {"readelf", "-d", so, NULL};
    assert_int_equal(run(readelf), 0);
    char soname[64];
    snprintf(soname, sizeof soname, "[libropegrad.so.%d.%d]", RG_VERSION_MAJOR, RG_VERSION_MINOR);
    if (!strstr(out, soname)) fail_msg("libropegrad.so: no soname %s:\n%s", soname, out);

    /* the user's compile line */
    char *pkg[] = {"pkg-config", "--cflags", "--libs", "ropegrad", NULL};
    if (run(pkg)) fail_msg("pkg-config ropegrad:\n%s", out);
    static char pkg_out[4096], flags[4096];
    snprintf(pkg_out, sizeof pkg_out, "%.4000s", out);
    if (!strstr(pkg_out, prefix)) fail_msg("pkg-config points elsewhere: %s", pkg_out);
    char src[400], exe[400];
    snprintf(src, sizeof src, "%s/custom_task.c", tmp); /* a copy outside the repository, built there */
    char *cp[] = {"cp", "examples/custom_task.c", "examples/alibi_learned.h", tmp, NULL};
    if (run(cp)) fail_msg("cannot copy examples/custom_task.c, alibi_learned.h (run from the repository):\n%s", out);
    snprintf(exe, sizeof exe, "%s/custom_task", tmp);
    char *cc[64] = {"cc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-O1", src, "-o", exe};
    int argc = 7; /* no -I or -L into the repository: only what pkg-config says */
    sanitizer_flags(flags, sizeof flags, cc, &argc, 64);
    split_into(pkg_out, cc, &argc, 64);
    cc[argc] = NULL;
    if (run(cc)) fail_msg("building custom_task against the install failed:\n%s", out);
    char *needed[] = {"readelf", "-d", exe, NULL};
    assert_int_equal(run(needed), 0);
    if (!strstr(out, soname)) fail_msg("custom_task does not link the shared library %s:\n%s", soname, out);

    /* outside the repository: the user's task and encoding beside the built-in copy and rope (copy's n=8 set from
       the installed data file), then --eval of the user task x user encoding checkpoint in the same program */
    char dir[400], data[500], ck[600], dir2[400];
    snprintf(dir, sizeof dir, "%s/out", tmp);
    snprintf(data, sizeof data, "%s/share/ropegrad/eval_sets.h5", prefix);
    char *prog[] = {exe, "--task", "recall,copy", "--pos", "alibi-learned,rope", "--steps", "4", "--eval-every", "0",
                    "--test-lens", "4,8", "--train-len", "4", "--batch", "8", "--d-model", "16", "--d-ff", "32",
                    "--rope-scaling", "none", "--jobs", "1", "--quiet", "--data", data, "--out", dir, NULL};
    if (run(prog)) fail_msg("the installed custom_task failed:\n%s", out);
    static const char *const cells[] = {"recall,alibi-learned,base,none,1,4,", "recall,rope,base,none,1,4,",
                                        "copy,alibi-learned,base,none,1,4,", "copy,rope,base,none,1,4,"};
    for (int i = 0; i < 4; i++) {
        int rows = count_rows(dir, cells[i]);
        if (rows != 2) fail_msg("report.csv: %d rows %s (want 2)", rows, cells[i]);
    }
    file_has(dir, "report.md", "| alibi-learned");
    file_has(dir, "report.md", "recall");
    file_has(dir, "report.json", "\"alibi-learned\"");
    file_has(dir, "report.json", "\"recall\"");
    static char trained[512], evaluated[512];
    row_metrics(dir, cells[0], trained, sizeof trained);
    snprintf(ck, sizeof ck, "%s/ckpt/recall-alibi-learned-seed1.h5", dir);
    snprintf(dir2, sizeof dir2, "%s/eval", tmp);
    char *eval[] = {exe, "--eval", ck, "--test-lens", "4,8", "--rope-scaling", "none", "--quiet", "--out", dir2, NULL};
    if (run(eval)) fail_msg("the installed custom_task --eval failed:\n%s", out);
    assert_int_equal(count_rows(dir2, cells[0]), 2);
    row_metrics(dir2, cells[0], evaluated, sizeof evaluated);
    if (strncmp(trained, "4,", 2)) fail_msg("recall x alibi-learned rows: %s", trained);
    assert_string_equal(evaluated, trained); /* n,exact_match,token_acc at n = 4 and 8 */

    /* the installed train_order finds the installed data file by itself (no --data, no ROPEGRAD_DATA) */
    char bin[500], want[PATH_MAX + 32], real[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/bin/train_order", prefix);
    if (!realpath(data, real)) fail_msg("no %s", data);
    snprintf(want, sizeof want, "\"data\":\t\"%s\"", real);
    unsetenv("ROPEGRAD_DATA");
    char *installed[] = {bin, "--pos", "rope", "--steps", "2", "--print-config", NULL};
    if (run(installed) || !strstr(out, want))
        fail_msg("the installed train_order did not find %s by itself:\n%s", real, out);
}

/* Every library header that README.md or a page of docs/ tells a user to include (`#include "X"` with src/X in the
 * repository, or `#include <ropegrad/X>`) is installed as include/ropegrad/X, and one file including them all
 * compiles with only `pkg-config --cflags ropegrad` (a header the docs name but make install left out, as
 * nn/pos_ext.h for M-RoPE and FIRE once was, fails here). */
static void test_documented_headers_installed(void **state)
{
    glob_t g;
    assert_int_equal(glob("docs/*.md", 0, NULL, &g), 0);
    char src[400], obj[400], line[1024], names[64][128];
    int n = 0;
    for (size_t i = 0; i <= g.gl_pathc; i++) {
        FILE *f = fopen(i < g.gl_pathc ? g.gl_pathv[i] : "README.md", "r");
        if (!f) fail_msg("cannot read %s (run from the repository)", i < g.gl_pathc ? g.gl_pathv[i] : "README.md");
        while (fgets(line, sizeof line, f)) {
            for (char *p = strstr(line, "#include "); p; p = strstr(p + 1, "#include ")) {
                char name[128], rel[160];
                if (sscanf(p, "#include <ropegrad/%127[^>]>", name) != 1 &&
                    (sscanf(p, "#include \"%127[^\"]\"", name) != 1 ||
                     (snprintf(rel, sizeof rel, "src/%s", name), access(rel, F_OK))))
                    continue;
                int seen = 0;
                for (int k = 0; k < n; k++) seen |= strcmp(names[k], name) == 0;
                if (!seen && n < 64) snprintf(names[n++], sizeof names[0], "%s", name);
            }
        }
        fclose(f);
    }
    globfree(&g);
    if (n < 4) fail_msg("only %d headers named in the docs: the scan is broken", n);
    snprintf(src, sizeof src, "%s/headers.c", tmp);
    snprintf(obj, sizeof obj, "%s/headers.o", tmp);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    for (int k = 0; k < n; k++) {
        char inst[200];
        snprintf(inst, sizeof inst, "include/ropegrad/%.127s", names[k]);
        must_exist(inst);
        fprintf(f, "#include <ropegrad/%s>\n", names[k]);
    }
    fputs("int main(void) { return 0; }\n", f);
    fclose(f);
    char *pkg[] = {"pkg-config", "--cflags", "ropegrad", NULL};
    if (run(pkg)) fail_msg("pkg-config ropegrad:\n%s", out);
    static char cflags[4096];
    snprintf(cflags, sizeof cflags, "%.4000s", out);
    char *cc[64] = {"cc", "-std=c11", "-Wall", "-Werror", "-c", src, "-o", obj};
    int argc = 8;
    split_into(cflags, cc, &argc, 64);
    cc[argc] = NULL;
    if (run(cc)) fail_msg("the documented headers do not compile from the install:\n%s", out);
}

/* The example plugin (examples/plugin_xpos_addition.c, built by make) in the INSTALLED train_order: a tiny grid of
 * its addition task with its xpos encoding beside rope and alibi (addition's sets generated, no data file read);
 * its checkpoint under --eval without --plugin names the plugin to pass, with it reloads; --check-pos xpos passes.
 * And the same source compiled the way a user compiles a plugin, against the installed headers only (pkg-config
 * --cflags ropegrad, -shared, nothing linked), is accepted by the installed program; built with ropegrad-f64's
 * flags, the installed rg_check_pos runs its float64 conformance check. */
static void test_plugin_in_installed_train_order(void **state)
{
    char bin[500], so[500], dir[500], ck[600], dir2[500], user_so[500];
    snprintf(bin, sizeof bin, "%s/bin/train_order", prefix);
    snprintf(so, sizeof so, "%s/examples/plugin_xpos_addition.so", build_dir);
    snprintf(dir, sizeof dir, "%s/plugin_out", tmp);
    char *grid[] = {bin, "--plugin", so, "--task", "addition", "--pos", "xpos,rope,alibi", "--steps", "3",
                    "--eval-every", "0", "--extrap-every", "0", "--test-lens", "3,5", "--train-len", "3", "--batch",
                    "8", "--d-model", "16", "--d-ff", "32", "--rope-scaling", "yarn", "--jobs", "1", "--quiet",
                    "--out", dir, NULL};
    if (run(grid)) fail_msg("the installed train_order --plugin %s failed:\n%s", so, out);
    /* xpos declares itself rotary: it gets yarn rows as rope does; alibi does not */
    static const char *const cells[] = {"addition,xpos,base,none,1,3,", "addition,rope,base,none,1,3,",
                                        "addition,alibi,base,none,1,3,", "addition,xpos,base,yarn,1,3,",
                                        "addition,rope,base,yarn,1,3,"};
    for (int i = 0; i < 5; i++)
        if (count_rows(dir, cells[i]) != 2) fail_msg("report.csv: no 2 rows %s", cells[i]);
    if (count_rows(dir, "addition,alibi,base,yarn,") != 0) fail_msg("report.csv: alibi has yarn rows");
    file_has(dir, "report.md", "xpos");
    /* addition's geometry (3n + 4 tokens: the longest distance 12 at L = 3), and its per-position view */
    file_has(dir, "report.md", "the longest training distance is 12");
    file_has(dir, "positions_addition.dat", "xpos");
    snprintf(ck, sizeof ck, "%s/ckpt/addition-xpos-seed1.h5", dir);
    snprintf(dir2, sizeof dir2, "%s/plugin_eval", tmp);
    char *eval[] = {bin, "--eval", ck, "--test-lens", "3", "--quiet", "--out", dir2, NULL};
    if (run(eval) != 2 || !strstr(out, "pass --plugin PATH/plugin_xpos_addition.so"))
        fail_msg("--eval without the plugin:\n%s", out);
    char *eval2[] = {bin, "--plugin", so, "--eval", ck, "--test-lens", "3", "--quiet", "--out", dir2, NULL};
    if (run(eval2)) fail_msg("--eval with the plugin:\n%s", out);
    /* the user's build of the plugin: installed headers only */
    char *pkg[] = {"pkg-config", "--cflags", "ropegrad", NULL};
    if (run(pkg)) fail_msg("pkg-config --cflags ropegrad:\n%s", out);
    static char cflags[4096], flags[4096];
    snprintf(cflags, sizeof cflags, "%.4000s", out);
    char src[500];
    snprintf(src, sizeof src, "%s/plugin_xpos_addition.c", tmp);
    char *cp[] = {"cp", "examples/plugin_xpos_addition.c", src, NULL};
    if (run(cp)) fail_msg("cannot copy the plugin's source:\n%s", out);
    snprintf(user_so, sizeof user_so, "%s/xpos_addition.so", tmp);
    char *cc[64] = {"cc", "-shared", "-fPIC", "-std=c11", "-O1", src, "-o", user_so};
    int argc = 8;
    sanitizer_flags(flags, sizeof flags, cc, &argc, 64);
    split_into(cflags, cc, &argc, 64);
    cc[argc] = NULL;
    if (run(cc)) fail_msg("building the plugin against the install failed:\n%s", out);
    char *check[] = {bin, "--plugin", user_so, "--check-pos", "xpos", NULL};
    if (run(check) || !strstr(out, "xpos: conforms")) fail_msg("--check-pos xpos of the user's build:\n%s", out);
    /* the float64 check: the same source built with ropegrad-f64's flags, run by the installed rg_check_pos */
    char *pkg64[] = {"pkg-config", "--cflags", "ropegrad-f64", NULL};
    if (run(pkg64)) fail_msg("pkg-config --cflags ropegrad-f64:\n%s", out);
    snprintf(cflags, sizeof cflags, "%.4000s", out);
    snprintf(user_so, sizeof user_so, "%s/xpos_addition_f64.so", tmp);
    argc = 8;
    sanitizer_flags(flags, sizeof flags, cc, &argc, 64);
    split_into(cflags, cc, &argc, 64);
    cc[argc] = NULL;
    if (run(cc)) fail_msg("building the float64 plugin against the install failed:\n%s", out);
    char tool[500];
    snprintf(tool, sizeof tool, "%s/bin/rg_check_pos", prefix);
    char *check64[] = {tool, "--plugin", user_so, "xpos", NULL};
    if (run(check64) || !strstr(out, "xpos: conforms (float64 checks)"))
        fail_msg("rg_check_pos of the float64 build:\n%s", out);
}

/* float32 headers with the float64 library (and the reverse) fail to link, naming the guard symbol; the f64
 * pkg-config file builds a program that runs the float64 build. */
static void test_float64_guard(void **state)
{
    char src[400], exe[400], lib[400];
    snprintf(src, sizeof src, "%s/guard.c", tmp);
    snprintf(exe, sizeof exe, "%s/guard", tmp);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    /* README's script's line: "ropegrad.h" on the installed -I (the forwarding header; <ropegrad/ropegrad.h> is the
     * documented headers' test above) */
    fputs("#include \"ropegrad.h\"\n#include <stdio.h>\nint main(void) { printf(\"%s %s\\n\", rg_version(), "
          "rg_build_real()); return 0; }\n", f);
    fclose(f);
    static char flags[4096], deps[4096], f64[4096];
    char *pkg[] = {"pkg-config", "--libs", "libxsmm", "openblas", "hdf5", NULL};
    assert_int_equal(run(pkg), 0);
    snprintf(deps, sizeof deps, "%.4000s", out);
    char inc[400];
    snprintf(inc, sizeof inc, "-I%s/include", prefix);
    for (int reverse = 0; reverse < 2; reverse++) {
        snprintf(lib, sizeof lib, "%s/lib/%s", prefix, reverse ? "libropegrad.a" : "libropegrad_f64.a");
        char *cc[64] = {"cc", "-std=c11", inc, src, lib, "-o", exe};
        int argc = 7;
        if (reverse) cc[argc++] = "-DRG_DOUBLE";
        sanitizer_flags(flags, sizeof flags, cc, &argc, 64);
        static char d[4096];
        snprintf(d, sizeof d, "%s", deps);
        split_into(d, cc, &argc, 64);
        cc[argc++] = "-lm";
        cc[argc] = NULL;
        if (run(cc) == 0) fail_msg("%s headers with %s linked", reverse ? "float64" : "float32", lib);
        const char *sym = reverse ? "rg_build_float64" : "rg_build_float32";
        if (!strstr(out, sym)) fail_msg("the link error does not name %s:\n%s", sym, out);
    }
    char *pkg64[] = {"pkg-config", "--cflags", "--libs", "ropegrad-f64", NULL};
    assert_int_equal(run(pkg64), 0);
    snprintf(f64, sizeof f64, "%.4000s", out);
    if (!strstr(f64, "-DRG_DOUBLE")) fail_msg("ropegrad-f64.pc lacks -DRG_DOUBLE: %s", f64);
    char *cc[64] = {"cc", "-std=c11", src, "-o", exe};
    int argc = 5;
    sanitizer_flags(flags, sizeof flags, cc, &argc, 64);
    split_into(f64, cc, &argc, 64);
    cc[argc] = NULL;
    if (run(cc)) fail_msg("building with ropegrad-f64 failed:\n%s", out);
    char *prog[] = {exe, NULL};
    assert_int_equal(run(prog), 0);
    assert_string_equal(out, RG_VERSION " float64\n");
}

static void test_uninstall(void **state)
{
    char pf[400];
    snprintf(pf, sizeof pf, "PREFIX=%s", prefix);
    char *make[] = {"make", "-s", "--no-print-directory", "uninstall", pf, NULL};
    if (run(make)) fail_msg("make uninstall failed:\n%s", out);
    char *find[] = {"find", prefix, "-not", "-type", "d", NULL};
    assert_int_equal(run(find), 0);
    if (out[0]) fail_msg("make uninstall left files behind:\n%s", out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_and_build_against_it),
        cmocka_unit_test(test_documented_headers_installed),
        cmocka_unit_test(test_plugin_in_installed_train_order),
        cmocka_unit_test(test_float64_guard),
        cmocka_unit_test(test_uninstall),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
