/* view_tables.h: the exact-match views' tables and cell statistics (view_tables.c). */
#ifndef ENG_VIEWS_VIEW_TABLES_H
#define ENG_VIEWS_VIEW_TABLES_H

#include "engine/base/files.h"
#include "engine/results/results.h"

/* report.md tables of task, a row per table row of the task and a column per test length (the training length
 * marked): exact match (mean ± sd [95% t interval] · k/N seeds reaching 0.5; with steps to learn when the table has
 * them), its maximum over seeds / median, and token accuracy (mean ± sd [95% t interval]). */
void eng_md_exact_table(eng_out *w, const eng_table *t, int task);
void eng_md_max_median(eng_out *w, const eng_table *t, int task);
void eng_md_token_table(eng_out *w, const eng_table *t, int task);
/* report.json's statistics of row r at test length n, exact match or token accuracy: {mean, sd, ci95_t,
 * ci95_bootstrap, max, median, k_reaching_0.5 (exact match only), n_seeds, per_seed}, returned as void * (a cJSON *
 * the caller adds to its tree). */
void *eng_json_exact(const eng_table *t, const eng_row *r, int n);
void *eng_json_token(const eng_table *t, const eng_row *r, int n);

#endif
