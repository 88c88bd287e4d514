/* test_plugin.c: train_order's plugins (src/engine/plugin.h) and the program's own name, end to end through the
 * built train_order: the plugins it must refuse (a table: missing file, not a shared library, no magic record,
 * another version, descriptors of another layout, a float64 build: exit status 2; an init that fails: 1), each
 * with a message naming the file (and both versions or precisions), and the refused plugin's init never ran; the
 * example plugin (xpos + addition) from --plugin and from ROPEGRAD_PLUGINS: --check-pos xpos passes in float32, a
 * tiny grid --pos xpos,rope,alibi trains addition, its checkpoint records the plugin and --eval without it names
 * the --plugin to pass; the allowed lists of --task and --pos come from the registries; a copy of the program
 * under another name calls itself by that name; rg_check_pos runs the float64 check of a float64 build of the
 * plugin and refuses the float32 one. */
#define _DEFAULT_SOURCE /* realpath */
#include "eng_harness.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "version.h"

static char build[PATH_MAX], good[PATH_MAX + 64];

static int setup(void **state)
{
    if (th_setup(state)) return -1;
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", th_bin); /* <build>/examples/train_order */
    snprintf(build, sizeof build, "%s", dirname(dirname(tmp)));
    snprintf(good, sizeof good, "%s/examples/plugin_xpos_addition.so", build);
    return 0;
}

static void has(const char *text)
{
    if (!strstr(th_logbuf, text)) fail_msg("the output does not say '%s':\n%s", text, th_logbuf);
}

static void test_refused(void **state)
{
    /* files that are no shared library, of every size (the short ones exited 1, the longer ones 2): in th_tmpdir */
    static const struct { const char *name; size_t bytes; } junk[] = {{"empty.so", 0}, {"short.so", 15},
                                                                      {"long.so", 70000}};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", th_tmpdir, junk[i].name);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        for (size_t k = 0; k < junk[i].bytes; k++) fputc("garbage, not ELF\n"[k % 17], f);
        assert_int_equal(fclose(f), 0);
    }
    /* file: in the build folder, or "tmp:" in th_tmpdir */
    static const struct { const char *file; int status; const char *says[3]; } cases[] = {
        {"test_plugins/no_such.so", 2, {"cannot be read", "no_such.so", NULL}},
        {"libropegrad.a", 2, {"dlopen failed", "libropegrad.a", "invalid ELF header"}},
        {"tmp:empty.so", 2, {"not a shared library this program can load", "empty.so", "file too short"}},
        {"tmp:short.so", 2, {"not a shared library this program can load", "short.so", "file too short"}},
        {"tmp:long.so", 2, {"not a shared library this program can load", "long.so", "invalid ELF header"}},
        {"test_plugins/plugin_small.so", 2, {"its rg_plugin_magic is 4 bytes", "RG_PLUGIN_MAGIC", "plugin_small.so"}},
        {"test_plugins/plugin_silent.so", 1,
         {"its init function returned failure without a message", "plugin_silent.so", NULL}},
        {"test_plugins/plugin_nomagic.so", 2, {"no rg_plugin_magic", "RG_PLUGIN_MAGIC", NULL}},
        {"test_plugins/plugin_version.so", 2,
         {"built against ropegrad 0.", "this program is ropegrad " RG_VERSION, NULL}},
        {"test_plugins/plugin_layout.so", 2, {"descriptors are of another layout", "plugin_layout.so", NULL}},
        {"test_plugins/plugin_f64.so", 2, {"built for float64", "this program is float32", "plugin_f64.so"}},
        {"test_plugins/plugin_init.so", 1, {"rg_plugin_init failed", "refusing on purpose", "plugin_init.so"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[PATH_MAX + 64];
        bool tmp = !strncmp(cases[i].file, "tmp:", 4);
        snprintf(path, sizeof path, "%s/%s", tmp ? th_tmpdir : build, cases[i].file + (tmp ? 4 : 0));
        int rc = th_run("--plugin %s --pos bad --print-config", path);
        if (rc != cases[i].status) fail_msg("%s: exit %d, want %d:\n%s", cases[i].file, rc, cases[i].status, th_logbuf);
        for (int k = 0; k < 3 && cases[i].says[k]; k++) has(cases[i].says[k]);
        if (strstr(th_logbuf, "\"pos\"")) fail_msg("%s: the run went on:\n%s", cases[i].file, th_logbuf);
    }
    /* the good plugin's encodings are valid names; the refused one's "bad" never got registered */
    char bad[PATH_MAX + 64];
    snprintf(bad, sizeof bad, "%s/test_plugins/plugin_version.so", build);
    assert_int_equal(th_run("--plugin %s --plugin %s --pos xpos --print-config", good, bad), 2);
    has("plugin_version.so");
}

static void test_check_pos(void **state)
{
    assert_int_equal(th_run("--plugin %s --check-pos xpos", good), 0);
    has("PASS xpos           grad rotate_qk");
    has("xpos: conforms (float32 checks");
    has("rope_scaling yarn");
    assert_int_equal(th_run("--check-pos rope-half"), 0); /* a built-in, in float32 */
    has("PASS rope-half      shift");
    assert_int_equal(th_run("--check-pos xpos"), 2); /* without the plugin: not registered */
    has("unknown position encoding 'xpos'");
    /* it runs no experiment: any option but --plugin is refused, naming it (it was silently ignored) */
    static const struct { const char *args, *says; } others[] = {
        {"--check-pos rope --steps 5", "--steps does not apply with --check-pos"},
        {"--task copy --check-pos rope", "--task does not apply with --check-pos"},
        {"--check-pos rope --pos alibi", "--pos does not apply with --check-pos"},
        {"--check-pos rope --quiet", "--quiet does not apply with --check-pos"},
        {"--check-pos rope --out x", "--out does not apply with --check-pos"},
    };
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (th_run("%s", others[i].args) != 2 || !strstr(th_logbuf, others[i].says))
            fail_msg("'%s' is not refused with '%s':\n%s", others[i].args, others[i].says, th_logbuf);
}

static void test_environment_and_lists(void **state)
{
    char env[2 * PATH_MAX + 256];
    snprintf(env, sizeof env, "%s:%s", good, good); /* listed twice: loaded once */
    setenv("ROPEGRAD_PLUGINS", env, 1);
    int rc = th_run("--task addition --pos xpos,rope --print-config");
    unsetenv("ROPEGRAD_PLUGINS");
    if (rc) fail_msg("ROPEGRAD_PLUGINS: exit %d:\n%s", rc, th_logbuf);
    has("\"task\":\t\"addition\"");
    has("\"pos\":\t\"rope,xpos\"");
    has("xpos_gamma=0.4,"); /* a setting's default in its shortest form that reads back equal, not 0.40000000000000002 */
    /* the allowed lists name every registered task and encoding, the plugin's too */
    assert_int_equal(th_run("--plugin %s --task nope", good), 2);
    has("allowed: copy, reverse, sort, ");
    has("frames, frames_qwen2vl, addition, all");
    assert_int_equal(th_run("--plugin %s --pos nope", good), 2);
    has("t5-2d, xpos, all");
    assert_int_equal(th_run("--task addition"), 2); /* without the plugin */
    has("lm_en, grid_copy");
    /* --help lists the plugin and what it registered */
    assert_int_equal(th_run("--plugin %s --help", good), 0);
    has("Plugins loaded");
    has("--pos xpos");
    has("--task addition");
}

/* A tiny grid of the plugin's task with its encoding beside two built-ins; the checkpoint's record. */
static void test_grid_and_checkpoint(void **state)
{
    char out[PATH_MAX + 16], ck[PATH_MAX + 64];
    snprintf(out, sizeof out, "%s/grid", th_tmpdir);
    int rc = th_run("--plugin %s --task addition --pos xpos,rope,alibi --steps 3 --eval-every 0 --extrap-every 0 "
                    "--test-lens 3,5 --train-len 3 --batch 8 --d-model 16 --d-ff 32 --rope-scaling none --jobs 1 "
                    "--out %s", good, out); /* not --quiet: a failure shows what the program said */
    if (rc) fail_msg("the grid failed (%d):\n%s", rc, th_logbuf);
    char csv[1 << 14], path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/report.csv", out);
    th_read_text(path, csv, sizeof csv);
    static const char *const rows[] = {"addition,xpos,base,none,1,3,", "addition,rope,base,none,1,3,",
                                       "addition,alibi,base,none,1,3,"};
    for (int i = 0; i < 3; i++)
        if (!strstr(csv, rows[i])) fail_msg("report.csv has no row %s:\n%s", rows[i], csv);
    snprintf(ck, sizeof ck, "%s/ckpt/addition-xpos-seed1.h5", out);
    snprintf(out, sizeof out, "%s/eval", th_tmpdir);
    assert_int_equal(th_run("--eval %s --quiet --out %s", ck, out), 2); /* no plugin: nothing loaded from the file */
    has("its encoding 'xpos' was registered by the plugin plugin_xpos_addition.so (sha256 ");
    has("pass --plugin PATH/plugin_xpos_addition.so");
    snprintf(ck, sizeof ck, "%s/grid/ckpt/addition-alibi-seed1.h5", th_tmpdir);
    assert_int_equal(th_run("--eval %s --quiet --out %s", ck, out), 2); /* a built-in encoding, the plugin's task */
    has("its task 'addition' was registered by the plugin plugin_xpos_addition.so");
    assert_int_equal(th_run("--plugin %s --eval %s --test-lens 3 --quiet --out %s", good, ck, out), 0);
}

/* rg_check_pos (tools/check_pos.c): the float64 check of a plugin built for float64; a float32 plugin refused. */
static void test_check_pos_float64(void **state)
{
    char tool[PATH_MAX + 32], f64[PATH_MAX + 64];
    snprintf(tool, sizeof tool, "%s/tools/rg_check_pos", build);
    snprintf(f64, sizeof f64, "%s/test_plugins/plugin_f64.so", build);
    th_exe = tool;
    int rc = th_run("--plugin %s xpos", f64);
    if (rc) fail_msg("rg_check_pos --plugin plugin_f64.so xpos: exit %d\n%s", rc, th_logbuf);
    has("PASS xpos           grad model");
    has("<= 3.67e-07"); /* the float64 bound of the model-level check */
    has("rg_check_pos: xpos: conforms (float64 checks)");
    assert_int_equal(th_run("--plugin %s xpos", good), 2);
    has("built for float32, this program is float64");
    assert_int_equal(th_run("--pos xpos"), 2);
    has("usage: rg_check_pos");
    th_exe = th_bin;
}

/* A program on rg_engine_main under another name calls itself by it. */
static void test_own_name(void **state)
{
    char copy[PATH_MAX + 16];
    snprintf(copy, sizeof copy, "%s/my_experiment", th_tmpdir);
    th_copy_file(th_bin, copy);
    assert_int_equal(chmod(copy, 0755), 0);
    th_exe = copy;
    assert_int_equal(th_run("--help"), 0);
    has("usage: my_experiment [options]");
    assert_int_equal(th_run("--pos nope"), 2);
    has("my_experiment: --pos: 'nope' is not valid");
    has("(my_experiment --help lists every option)");
    if (strstr(th_logbuf, "train_order")) fail_msg("the copy calls itself train_order:\n%s", th_logbuf);
    th_exe = th_bin;
}

/* --continue of an invocation that loaded a plugin: invocation.json records the plugin's file and SHA-256, and the
 * folder continues only with that build loaded again (another build of the same names would train another model
 * into the same report). One table: what is loaded with --continue, the exit status, what it says. */
static void test_continue_needs_the_same_plugin(void **state)
{
    char out[PATH_MAX + 16], other[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/pc", th_tmpdir);
    snprintf(other, sizeof other, "%s/plugin_xpos_addition.so", th_tmpdir); /* the same name, another build: */
    FILE *in = fopen(good, "rb"), *to = fopen(other, "wb");    /* its bytes and one more (still loadable) */
    assert_non_null(in);
    assert_non_null(to);
    char buf[1 << 16];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) assert_int_equal(fwrite(buf, 1, n, to), n);
    assert_int_equal(fputc('x', to), 'x');
    fclose(in);
    assert_int_equal(fclose(to), 0);
    int rc = th_run("--plugin %s --task addition --pos xpos,rope --steps 3 --eval-every 0 --extrap-every 0 "
                    "--test-lens 3 --train-len 3 --batch 8 --d-model 16 --d-ff 32 --rope-scaling none --jobs 1 "
                    "--quiet --out %s", good, out);
    if (rc) fail_msg("the grid failed (%d):\n%s", rc, th_logbuf);
    static const struct { int which; int status; const char *says; } cases[] = {
        {0, 2, "which is not loaded: pass --plugin PATH/plugin_xpos_addition.so"},
        {1, 2, "and the one loaded now is another build of it"},
        {2, 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *plugin = cases[i].which == 1 ? other : good;
        rc = cases[i].which ? th_run("--plugin %s --continue %s --quiet", plugin, out) :
                              th_run("--continue %s --quiet", out);
        if (rc != cases[i].status || !strstr(th_logbuf, cases[i].says))
            fail_msg("case %zu: exit %d (want %d), output:\n%s", i, rc, cases[i].status, th_logbuf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_refused, th_reset),
        cmocka_unit_test_setup(test_check_pos, th_reset),
        cmocka_unit_test_setup(test_environment_and_lists, th_reset),
        cmocka_unit_test_setup(test_grid_and_checkpoint, th_reset),
        cmocka_unit_test_setup(test_check_pos_float64, th_reset),
        cmocka_unit_test_setup(test_own_name, th_reset),
        cmocka_unit_test_setup(test_continue_needs_the_same_plugin, th_reset),
    };
    return cmocka_run_group_tests(tests, setup, th_teardown);
}
