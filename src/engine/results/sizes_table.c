/* sizes_table.c: the model-size axis in a report's outputs (docs/experiment.md, "A model-size axis"). A report has
 * the axis when its runs carry a size (eng_result.size: a --sizes grid, a checkpoint of one, a report read back
 * with the column); without it every output is as before the axis existed, so these helpers then add nothing.
 * With it: report.csv, report_cells.csv and report_positions.csv end with the size's columns, report.json's runs,
 * rows and cells have its fields, report.md's model line names the sizes and a table gives each size's numbers and
 * parameter count. The row labels carry the size themselves (eng_row_label), so every table and plot has a row
 * per size. */
#include "engine/base/files.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool eng_results_sized(const eng_result *res, int n)
{
    for (int i = 0; i < n; i++)
        if (res[i].size[0]) return true;
    return false;
}

const char *eng_size_csv_header(bool sized) { return sized ? ENG_CSV_SIZE_COLUMNS : ""; }

const char *eng_size_csv_fields(const eng_result *r, bool sized, char *buf, size_t cap)
{
    buf[0] = 0;
    if (sized)
        snprintf(buf, cap, ",%s,%d,%d,%d,%d,%" PRId64, r->size, r->d_model, r->n_layers, r->n_heads, r->d_ff,
                 r->params);
    return buf;
}

/* The parameter count of a row: its first run's (every run of a row is one model shape). */
static int64_t row_params(const eng_table *t, const eng_row *r) { return r->n_runs ? t->res[r->runs[0]].params : 0; }

const char *eng_row_size_fields(const eng_table *t, const eng_row *r, char *buf, size_t cap)
{
    buf[0] = 0;
    if (eng_results_sized(t->res, t->n_res))
        snprintf(buf, cap, ",%s,%d,%d,%d,%d,%" PRId64, r->size, r->d_model, r->n_layers, r->n_heads, r->d_ff,
                 row_params(t, r));
    return buf;
}

void eng_size_json(void *object, const eng_result *r)
{
    if (!r->size[0]) return;
    cJSON *o = object;
    cJSON_AddStringToObject(o, "size", r->size);
    cJSON_AddNumberToObject(o, "d_model", r->d_model);
    cJSON_AddNumberToObject(o, "n_layers", r->n_layers);
    cJSON_AddNumberToObject(o, "n_heads", r->n_heads);
    cJSON_AddNumberToObject(o, "d_ff", r->d_ff);
    cJSON_AddNumberToObject(o, "params", (double)r->params);
}

void eng_row_size_json(void *object, const eng_table *t, const eng_row *r)
{
    if (r->n_runs && r->size[0]) eng_size_json(object, &t->res[r->runs[0]]);
}

const char *eng_model_text(const rg_model_config *m, const eng_table *t, char *buf, size_t cap)
{
    if (!eng_results_sized(t->res, t->n_res)) {
        snprintf(buf, cap, "d_model %d, n_heads %d, n_layers %d, d_ff %d", m->d_model, m->n_heads, m->n_layers,
                 m->d_ff);
        return buf;
    }
    snprintf(buf, cap, "sizes");
    for (int k = 0; k < t->n_rows; k++) { /* each size once, in the rows' order (by d_model, then n_layers) */
        bool seen = false;
        for (int j = 0; j < k && !seen; j++) seen = strcmp(t->rows[j].size, t->rows[k].size) == 0;
        if (!seen && strlen(buf) + strlen(t->rows[k].size) + 3 < cap)
            snprintf(buf + strlen(buf), cap - strlen(buf), "%s %s", strcmp(buf, "sizes") ? "," : "", t->rows[k].size);
    }
    snprintf(buf + strlen(buf), cap - strlen(buf), " (d_model x n_layers; see Model sizes)");
    return buf;
}

void eng_md_sizes(eng_out *w, const eng_table *t)
{
    if (!eng_results_sized(t->res, t->n_res)) return;
    eng_out_printf(w, "## Model sizes\n\nEach size of the grid (--sizes; docs/experiment.md, \"A model-size axis\"): "
                      "its rows in every table and plot carry its name. Parameters: the model's trainable parameter "
                      "count, per encoding (a learned position table or a bias adds its own).\n\n"
                      "| size | d_model | n_layers | n_heads | d_ff | parameters |\n|---|---|---|---|---|---|\n");
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        bool seen = false;
        for (int j = 0; j < k && !seen; j++) seen = strcmp(t->rows[j].size, r->size) == 0;
        if (seen) continue;
        eng_out_printf(w, "| %s | %d | %d | %d | %d |", r->size, r->d_model, r->n_layers, r->n_heads, r->d_ff);
        /* the distinct counts of the size's rows, each with the encodings that have it */
        int64_t done[RG_POS_MAX];
        int n_done = 0;
        for (int a = k; a < t->n_rows; a++) {
            int64_t p = row_params(t, &t->rows[a]);
            bool listed = strcmp(t->rows[a].size, r->size) != 0 || !p;
            for (int d = 0; d < n_done && !listed; d++) listed = done[d] == p;
            if (listed || n_done == RG_POS_MAX) continue;
            done[n_done++] = p;
            eng_out_printf(w, "%s %" PRId64 " (", n_done > 1 ? ";" : "", p);
            bool named[RG_POS_MAX] = {false}, first = true;
            for (int b = a; b < t->n_rows; b++) {
                const eng_row *x = &t->rows[b];
                if (strcmp(x->size, r->size) || row_params(t, x) != p || named[x->pos]) continue;
                named[x->pos] = true;
                eng_out_printf(w, "%s%s", first ? "" : ", ", rg_pos_name(x->pos));
                first = false;
            }
            eng_out_printf(w, ")");
        }
        eng_out_printf(w, "%s |\n", n_done ? "" : " not known");
    }
    eng_out_printf(w, "\n");
}

void *eng_sizes_json(const eng_options *o)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < o->n_sizes; k++) {
        eng_size s = o->sizes[k];
        eng_size_resolve(&s, o->model.n_heads); /* a combined report's sizes: their items as given */
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "size", s.text);
        cJSON_AddNumberToObject(x, "d_model", s.d_model);
        cJSON_AddNumberToObject(x, "n_layers", s.n_layers);
        cJSON_AddNumberToObject(x, "n_heads", s.n_heads);
        cJSON_AddNumberToObject(x, "d_ff", s.d_ff);
        cJSON_AddItemToArray(a, x);
    }
    return a;
}
