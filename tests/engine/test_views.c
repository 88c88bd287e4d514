/* test_views.c: the report's views (src/engine/views/views.c). The table's rows have distinct names and the JSON
 * keys their hooks need; a view applies to a task of the table exactly when the task asks for it (rg_task_views);
 * and a report gives a task the parts of the views it declares only: a task asking for the per-position view alone
 * gets its section heading but no exact-match tables or curves, and its cells' "exact_match" is null, while a task
 * asking for exact match gets them. */
#include "report_fixture.h"
#include "task/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rg_task only_exact, only_positions;

static int setup(void **state)
{
    static rg_task_desc e, p; /* the copy task's geometry under other names, each asking for one view */
    e = rg_task_desc_copy;
    e.name = "only_exact";
    e.views = RG_TASK_VIEW_EXACT;
    p = rg_task_desc_copy;
    p.name = "only_positions";
    p.views = RG_TASK_VIEW_POSITIONS;
    if (rg_task_register(&e, &only_exact) || rg_task_register(&p, &only_positions)) return -1;
    return rf_setup(state);
}

static void test_view_table(void **state)
{
    int n = eng_view_count();
    assert_true(n >= 4);
    assert_null(eng_view_get(-1));
    assert_null(eng_view_get(n));
    for (int i = 0; i < n; i++) {
        const eng_view *v = eng_view_get(i);
        assert_non_null(v);
        assert_true(v->name[0] && strspn(v->name, "abcdefghijklmnopqrstuvwxyz_") == strlen(v->name));
        if (v->json && !v->json_key) fail_msg("view %s has a JSON hook and no key", v->name);
        if (!v->markdown && !v->json && !v->plot && !v->plot_report) fail_msg("view %s has no hook", v->name);
        for (int j = 0; j < i; j++)
            if (strcmp(eng_view_get(j)->name, v->name) == 0) fail_msg("two views named %s", v->name);
    }
}

/* The index of the view named name (the test fails without one). */
static const eng_view *view(const char *name)
{
    for (int i = 0; i < eng_view_count(); i++)
        if (strcmp(eng_view_get(i)->name, name) == 0) return eng_view_get(i);
    fail_msg("no view %s", name);
    return NULL;
}

static void test_task_declares_views(void **state)
{
    double e[4] = {1, 1, 0.5, 0}, a[4] = {1, 1, 0.8, 0.3};
    eng_result res[3] = {rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e, a),
                         rf_result(only_exact, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e, a),
                         rf_result(only_positions, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e, a)};
    eng_table t;
    assert_int_equal(eng_table_build(&t, res, 3, 16), 0);
    static const struct { const char *view; int task; bool applies; } A[] = {
        {"exact_match", RG_TASK_COPY, true}, {"positions", RG_TASK_COPY, true}, {"grid", RG_TASK_COPY, false},
        {"exact_match", -1, true},           {"positions", -1, false},          {"exact_match", -2, false},
        {"positions", -2, true},             {"loss", -2, true},                {"exact_match", RG_TASK_SORT, false}};
    for (size_t i = 0; i < sizeof A / sizeof *A; i++) {
        int task = A[i].task == -1 ? only_exact : A[i].task == -2 ? only_positions : A[i].task;
        if (eng_view_applies(view(A[i].view), &t, task) != A[i].applies)
            fail_msg("view %s %s to task %s", A[i].view, A[i].applies ? "does not apply" : "applies",
                     rg_task_name(task));
    }
    eng_table_free(&t);

    char out[512];
    rf_make_dir(out, sizeof out, "declared");
    eng_options o = rf_options("");
    snprintf(o.out, sizeof o.out, "%s", out);
    eng_report_meta meta = {1, "t", false, 0, 0, NULL};
    assert_int_equal(eng_report(&o, res, 3, &meta), 0);
    char *md = rf_slurp(out, "report.md"), *js = rf_slurp(out, "report.json");
    assert_non_null(md);
    assert_non_null(js);
    static const struct { const char *text; bool want; } M[] = {
        {"## only_exact\n\n### only_exact: exact match", true}, {"### only_exact: token accuracy", true},
        {"## only_positions\n\n", true},                        {"### only_positions: exact match", false},
        {"### only_positions: token accuracy", false},          {"### only_positions: exact match, maximum", false}};
    for (size_t i = 0; i < sizeof M / sizeof *M; i++)
        if ((strstr(md, M[i].text) != NULL) != M[i].want)
            fail_msg("report.md %s '%s':\n%s", M[i].want ? "lacks" : "has", M[i].text, md);
    /* a cell of only_positions: its exact_match is null (the key stays: one schema for every cell) */
    const char *cells = strstr(js, "\"cells\":");
    const char *cell = cells ? strstr(cells, "\"task\":\t\"only_positions\"") : NULL;
    assert_non_null(cell);
    const char *em = strstr(cell, "\"exact_match\":");
    assert_non_null(em);
    assert_int_equal(strncmp(em, "\"exact_match\":\tnull", 19), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/curves_only_exact.dat", out);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/curves_only_positions.dat", out);
    assert_int_not_equal(access(path, F_OK), 0);
    free(md);
    free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_table),
        cmocka_unit_test(test_task_declares_views),
    };
    return cmocka_run_group_tests(tests, setup, rf_teardown);
}
