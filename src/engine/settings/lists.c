/* lists.c: the list-valued options of train_order (--task, --pos, --seed, --seeds, --test-lens, --rope-scaling
 * (alias --rope-ext), --lr-schedule, --variants): each a parser from the flag's text into eng_options (0, or -1
 * for a value outside the allowed ones) and a printer back to that text (what --print-config and --help show). The table in settings.c names
 * them. Also the names of the training variants and the labels every output shows a result under. */
#include "engine/settings/lists.h"
#include "engine/base/labels.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int split(char *list, char **items, int max)
{
    int n = 0;
    for (char *p = list;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (!*p || n == max) return -1;
        items[n++] = p;
        if (!comma) return n;
        p = comma + 1;
    }
}

int eng_parse_task(eng_options *o, char *v)
{
    memset(o->tasks, 0, sizeof o->tasks);
    if (strcmp(v, "all") == 0) { /* every registered task but the opt-in ones (tricks, language models) */
        for (int i = 0; i < rg_task_count(); i++) o->tasks[i] = !(rg_task_get(i)->flags & RG_TASK_OPT_IN);
        return 0;
    }
    char *it[8];
    int n = split(v, it, 8);
    for (int i = 0; i < n; i++) {
        rg_task t;
        if (rg_task_parse(it[i], &t) || o->tasks[t]) return -1; /* unknown, or named twice */
        o->tasks[t] = true;
    }
    return n > 0 ? 0 : -1;
}

void eng_allowed_names(bool tasks, char *b, size_t n)
{
    b[0] = 0;
    int count = tasks ? rg_task_count() : rg_pos_count();
    for (int i = 0; i < count; i++)
        snprintf(b + strlen(b), n - strlen(b), "%s, ", tasks ? rg_task_name(i) : rg_pos_name((rg_pos_kind)i));
    snprintf(b + strlen(b), n - strlen(b), "all (every one not opt-in), or a comma list of them");
}

void eng_print_task(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < rg_task_count(); i++)
        if (o->tasks[i]) snprintf(b + strlen(b), n - strlen(b), "%s%s", b[0] ? "," : "", rg_task_name((rg_task)i));
}

int eng_parse_pos(eng_options *o, char *v)
{
    memset(o->pos, 0, sizeof o->pos);
    if (strcmp(v, "all") == 0) { /* every registered encoding but the opt-in ones (the grid encodings) */
        for (int i = 0; i < rg_pos_count(); i++)
            o->pos[i] = !(rg_pos_encoding_of((rg_pos_kind)i)->flags & RG_POS_OPT_IN);
        return 0;
    }
    char *it[32];
    int n = split(v, it, 32);
    for (int i = 0; i < n; i++) {
        rg_pos_kind k;
        if (rg_pos_parse(it[i], &k) || o->pos[k]) return -1; /* unknown, or named twice */
        o->pos[k] = true;
    }
    return n > 0 ? 0 : -1;
}

void eng_print_pos(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < rg_pos_count(); i++)
        if (o->pos[i]) snprintf(b + strlen(b), n - strlen(b), "%s%s", b[0] ? "," : "", rg_pos_name((rg_pos_kind)i));
}

/* NAME=VALUE items; on failure rg_last_error() says which item and why (the caller prints it): not NAME=VALUE, an
 * unknown setting, a value outside the limits the encoding declares, or a setting given twice (refused as --pos
 * refuses an encoding named twice, instead of the last one winning silently). */
int eng_parse_pos_config(eng_options *o, char *v)
{
    o->model.n_pos_values = 0;
    char *it[RG_POS_VALUES_MAX + 1];
    int n = v[0] ? split(v, it, RG_POS_VALUES_MAX) : 0;
    if (n < 0) return rg_error(RG_ERR_ARG, "an empty item, or more than %d items", RG_POS_VALUES_MAX), -1;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(it[i], "=");
        for (int j = 0; j < i; j++)
            if (strcspn(it[j], "=") == len && strncmp(it[i], it[j], len) == 0)
                return rg_error(RG_ERR_ARG, "%.*s is given twice", (int)len, it[i]), -1;
        if (rg_pos_config_set_text(&o->model, it[i])) return -1;
    }
    return 0;
}

void eng_print_pos_config(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < rg_pos_count(); i++) {
        const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)i);
        for (int j = 0; o->pos[i] && j < e->n_settings; j++) {
            const char *name = e->settings[j].name;
            char item[RG_POS_NAME_MAX + 32], num[32];
            eng_number_text(rg_pos_config_get(&o->model, name), num, sizeof num);
            snprintf(item, sizeof item, "%s=%s", name, num);
            if (!strstr(b, item)) snprintf(b + strlen(b), n - strlen(b), "%s%s", b[0] ? "," : "", item);
        }
    }
}

static int parse_int_in(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    if (!eng_is_decimal_int(s)) return -1;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* --seed S: one seed */
int eng_parse_seed(eng_options *o, char *v)
{
    o->n_seeds = 1;
    return parse_int_in(v, 1, 1000000, &o->seed_list[0]);
}

/* --seeds N (seeds 1..N) or a comma list of distinct seeds */
int eng_parse_seeds(eng_options *o, char *v)
{
    if (!strchr(v, ',')) {
        int n;
        if (parse_int_in(v, 1, ENG_MAX_SEEDS, &n)) return -1;
        for (int i = 0; i < n; i++) o->seed_list[i] = i + 1;
        o->n_seeds = n;
        return 0;
    }
    char *it[ENG_MAX_SEEDS];
    int n = split(v, it, ENG_MAX_SEEDS);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (parse_int_in(it[i], 1, 1000000, &o->seed_list[i])) return -1;
        for (int j = 0; j < i; j++)
            if (o->seed_list[j] == o->seed_list[i]) return -1;
    }
    o->n_seeds = n;
    return 0;
}

void eng_print_seeds(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < o->n_seeds; i++) snprintf(b + strlen(b), n - strlen(b), "%s%d", i ? "," : "", o->seed_list[i]);
}

int eng_parse_test_lens(eng_options *o, char *v)
{
    char *it[ENG_MAX_LENS];
    int n = split(v, it, ENG_MAX_LENS);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (strchr(it[i], 'x') ? rg_size_parse(it[i], &o->test_lens[i]) != RG_OK
                               : parse_int_in(it[i], 1, ENG_MAX_TEST_N, &o->test_lens[i]))
            return -1;
        for (int j = 0; j < i; j++)
            if (o->test_lens[j] == o->test_lens[i]) return -1;
    }
    o->n_test_lens = n;
    return 0;
}

void eng_print_test_lens(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < o->n_test_lens; i++)
        snprintf(b + strlen(b), n - strlen(b), "%s%d", i ? "," : "", o->test_lens[i]);
}

int eng_parse_rope_ext(eng_options *o, char *v)
{
    o->n_exts = 0;
    if (strcmp(v, "none") == 0) return 0;
    char all[] = "pi,ntk,yarn,llama3,dynamic";
    if (strcmp(v, "all") == 0) v = all;
    char *it[ENG_MAX_EXTS];
    int n = split(v, it, ENG_MAX_EXTS);
    for (int i = 0; i < n; i++) {
        rg_rope_ext e;
        double f;
        if (eng_ext_parse(it[i], &e, &f) || e == RG_ROPE_EXT_NONE) return -1;
        for (int j = 0; j < i; j++)
            if (o->exts[j] == e && o->ext_factor[j] == f) return -1;
        o->exts[o->n_exts] = e;
        o->ext_factor[o->n_exts++] = f;
    }
    return n > 0 ? 0 : -1;
}

void eng_print_rope_ext(const eng_options *o, char *b, size_t n)
{
    snprintf(b, n, "%s", o->n_exts ? "" : "none");
    for (int i = 0; i < o->n_exts; i++) {
        char t[48];
        snprintf(b + strlen(b), n - strlen(b), "%s%s", i ? "," : "", eng_ext_text(o->exts[i], o->ext_factor[i], t,
                 sizeof t));
    }
}

int eng_parse_sizes(eng_options *o, char *v)
{
    char *it[ENG_MAX_SIZES];
    int n = split(v, it, ENG_MAX_SIZES);
    if (n <= 0) return -1; /* empty, an empty item, or more than ENG_MAX_SIZES */
    eng_size parsed[ENG_MAX_SIZES];
    for (int i = 0; i < n; i++) {
        if (eng_size_parse(it[i], &parsed[i])) return -1;
        for (int j = 0; j < i; j++) /* named twice (64x2 and 064x2 too); numbers resolved later, eng_options_check */
            if (strcmp(parsed[j].text, parsed[i].text) == 0) return -1;
    }
    memcpy(o->sizes, parsed, sizeof parsed[0] * (size_t)n);
    o->n_sizes = n;
    return 0;
}

void eng_print_sizes(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < o->n_sizes; i++) snprintf(b + strlen(b), n - strlen(b), "%s%s", i ? "," : "", o->sizes[i].text);
}

int eng_parse_variants(eng_options *o, char *v)
{
    memset(o->variants, 0, sizeof o->variants);
    char all[] = "base,theta500k,rand,t5max128,bf16angles";
    if (strcmp(v, "all") == 0) v = all;
    char *it[ENG_VAR_COUNT];
    int n = split(v, it, ENG_VAR_COUNT);
    for (int i = 0; i < n; i++) {
        eng_variant x;
        if (eng_variant_parse(it[i], &x) || o->variants[x]) return -1;
        o->variants[x] = true;
    }
    return n > 0 ? 0 : -1;
}

void eng_print_variants(const eng_options *o, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < ENG_VAR_COUNT; i++)
        if (o->variants[i]) snprintf(b + strlen(b), n - strlen(b), "%s%s", b[0] ? "," : "", eng_variant_name((eng_variant)i));
}

int eng_parse_lr_schedule(eng_options *o, char *v)
{
    if (strcmp(v, "continue") == 0) o->lr_mode = ENG_LR_CONTINUE;
    else if (strcmp(v, "restart") == 0) o->lr_mode = ENG_LR_RESTART;
    else return -1;
    return 0;
}

void eng_print_lr_schedule(const eng_options *o, char *b, size_t n)
{
    snprintf(b, n, "%s", o->lr_mode == ENG_LR_RESTART ? "restart" : "continue");
}

/* ------------------------------------------------------------------ --help's lists */

/* Every registered task and encoding (rg_task_register, rg_pos_register before rg_engine_main), the opt-in ones
 * (named, not in all) marked. */
void eng_print_registries(FILE *f)
{
    fprintf(f, "\nTasks (--task values; * opt-in: named, not part of all):\n");
    for (int t = 0; t < rg_task_count(); t++) {
        const rg_task_desc *d = rg_task_get(t);
        fprintf(f, "  %-22s %s%s\n", d->name, d->flags & RG_TASK_OPT_IN ? "* " : "", d->summary ? d->summary : "");
    }
    fprintf(f, "\nPosition encodings (--pos values; * opt-in: named, not part of all):\n");
    for (int p = 0; p < rg_pos_count(); p++) {
        const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)p);
        fprintf(f, "  %-22s %s%s\n", e->name, e->flags & RG_POS_OPT_IN ? "* " : "", e->doc ? e->doc : "");
    }
}

bool eng_is_decimal_int(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}
