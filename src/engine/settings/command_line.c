/* command_line.c: train_order's command line, read through the option table (option_table.c): --help's text, the
 * two passes over argv (--config first, then every other flag, which wins), full option names only, and the
 * checks of which options apply to the mode (--resume, --eval, --replot, --compare, --combine). */
#include "engine/base/files.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/settings/lists.h"
#include "engine/settings/plugin_load.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"
#include "engine/settings/option_table.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define F(field) offsetof(eng_options, field)

static bool given_cli[ENG_SETTINGS_MAX]; /* given on the command line (given_any in the table: there or in --config) */

static void usage(FILE *f)
{
    eng_options d;
    eng_options_default(&d);
    /* the defaults a run uses: an encoding's max distance follows the default task's longest training distance */
    for (int p = 0; p < rg_pos_count(); p++) {
        const char *md = rg_pos_encoding_of((rg_pos_kind)p)->max_distance_setting;
        int dist = rg_task_longest_distance(0, d.train_len);
        if (md && dist >= 0) rg_pos_config_set(&d.model, md, eng_fair_max_distance(&d.model, (rg_pos_kind)p, dist));
    }
    fprintf(f, "usage: %s [options]\n"
               "Trains the reference transformer on copy/reverse/sort with n <= --train-len and reports exact-match\n"
               "accuracy at longer test lengths for each position encoding. Option names are exact (no\n"
               "abbreviations). --resume and --eval take the run's settings from the checkpoint: options that set\n"
               "them are refused there; its evaluation settings too, unless given. --continue OUT takes an\n"
               "interrupted invocation up where it stopped, with the settings recorded in OUT. A setting or\n"
               "--out given twice takes the last value; an option that names an input or a mode (--config,\n"
               "--data, --resume, --eval, --continue, --replot, --compare, --combine, --check-pos) is refused\n"
               "twice.\n\n", eng_prog());
    for (int i = 0; i < eng_setting_count(); i++) {
        const setting *s = eng_setting_at(i);
        if (!s->name) continue;
        char flag[64], def[256] = "";
        snprintf(flag, sizeof flag, "--%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
        if (s->kind == K_INT || s->kind == K_DOUBLE || s->kind == K_LIST || (s->kind == K_PATH && s->off == F(out)))
            eng_setting_format(s, &d, def, sizeof def);
        if (!strcmp(s->name, "jobs") || !strcmp(s->name, "seed") || !strcmp(s->name, "max-position")) def[0] = 0;
        fprintf(f, "  %-22s %s%s%s%s\n", flag, s->help, def[0] ? " (default " : "", def, def[0] ? ")" : "");
    }
    eng_print_registries(f);
    eng_plugins_usage(f);
    fprintf(f, "\nExit status: 0 success; 1 a run or an output failed, or --out is in use by another run of %s (the\n"
               "same command succeeds once that one ends); 2 a bad command line, including an --out holding\n"
               "another invocation's results without --overwrite, or a --continue folder holding a file that\n"
               "cannot be used (named; nothing written).\n", eng_prog());
}

/* The option token as typed (argv element), to refuse abbreviations: getopt_long accepts any unique prefix. */
static const char *typed(char **argv, const struct option *lo)
{
    if (lo->has_arg == required_argument && optarg == argv[optind - 1]) return argv[optind - 2];
    return argv[optind - 1];
}

/* One pass over argv; pass 1 handles only --config, pass 2 everything else. */
static void parse_pass(int argc, char **argv, eng_options *o, int pass)
{
    static struct option lo[ENG_SETTINGS_MAX + 1];
    int n = 0;
    for (int i = 0; i < eng_setting_count(); i++)
        if (eng_setting_at(i)->name) {
            bool has_arg = eng_setting_at(i)->kind != K_BOOL && eng_setting_at(i)->arg;
            lo[n++] = (struct option){eng_setting_at(i)->name, has_arg ? required_argument : no_argument, NULL, 1000 + i};
        }
    lo[n] = (struct option){0, 0, 0, 0};
    optind = 0; /* GNU: reinitialize */
    opterr = 0;
    int ch, idx;
    while ((ch = getopt_long(argc, argv, "+:", lo, &idx)) != -1) {
        if (ch == '?' || ch == ':') {
            const char *tok = argv[optind - 1];
            eng_usage_error("see --help", ch == ':' ? "%s: missing value" : "unknown or ambiguous option '%s'", tok);
        }
        ch -= 1000;
        const setting *s = eng_setting_at(ch);
        const char *tok = typed(argv, &lo[idx]);
        size_t len = strcspn(tok, "=");
        if (len != strlen(s->name) + 2 || strncmp(tok + 2, s->name, len - 2) != 0)
            eng_usage_error("the full option name (see --help)", "'%s' is an abbreviation of --%s", tok, s->name);
        bool is_config = !strcmp(s->name, "config");
        if (pass == 1) {
            if (s->off == F(compare[0]) && optind < argc && strncmp(argv[optind], "--", 2)) optind++; /* its B */
            if (is_config && given_cli[ch]) eng_usage_error("one --config", "--config given twice");
            if (is_config) { given_cli[ch] = true; eng_setting_apply(s, o, optarg, "--config"); }
            continue;
        }
        if (is_config) continue; /* done in pass 1 */
        if (s->kind == K_ACTION) { usage(stdout); exit(0); } /* --help */
        char origin[80];
        snprintf(origin, sizeof origin, "--%s", s->name);
        if (s->kind == K_BOOL && optarg) eng_usage_error("no value", "%s takes no value", origin);
        eng_setting_apply(s, o, s->kind == K_BOOL ? NULL : optarg, origin);
        if (given_cli[ch] && s->kind == K_PATH && s->off != F(out)) /* the value is checked first */
            eng_usage_error("each input and mode once: --config, --data, --resume, --eval, --continue, --replot, "
                           "--compare, --combine, --check-pos (a setting or --out given again takes the last value)",
                           "%s given twice (which one is meant?)", origin);
        given_cli[ch] = true;
        eng_setting_mark_given(s);
        if (s->off == F(compare[0])) { /* --compare A B: B is the next argument */
            if (optind >= argc || !strncmp(argv[optind], "--", 2))
                eng_usage_error("--compare A B (two report files)", "--compare %s: the second report is missing",
                               o->compare[0]);
            eng_setting_apply(s, o, argv[optind], origin);
            memmove(o->compare[1], o->compare[0], ENG_PATH);
            eng_setting_apply(s, o, optarg, origin);
            optind++;
        }
    }
    if (optind < argc) eng_usage_error("options only (see --help)", "unexpected argument '%s'", argv[optind]);
}

/* Options that do not apply to the mode are errors. */
static void check_modes(eng_options *o)
{
    for (int i = 0; o->check_pos[0] && i < eng_setting_count(); i++) { /* --check-pos runs no experiment */
        const setting *s = eng_setting_at(i);
        bool given = eng_setting_given(s) || (s->off == F(config) && o->config[0]);
        if (s->name && given && s->off != F(check_pos) && strcmp(s->name, "plugin"))
            eng_usage_error("--check-pos NAME with --plugin PATH only (the check chooses its own shapes)",
                           "--%s does not apply with --check-pos", s->name);
    }
    const char *tool = o->replot[0] ? "--replot" : o->compare[0][0] ? "--compare" : o->combine[0] ? "--combine" : NULL;
    for (int i = 0; tool && i < eng_setting_count(); i++) {
        const setting *s = eng_setting_at(i);
        if (!eng_setting_given(eng_setting_at(i)) || !s->name || s->off == F(quiet) ||
            ((s->off == F(out) || s->off == F(overwrite)) && (o->replot[0] || o->combine[0])))
            continue;
        if (s->mode == M_TOOL && !strcmp(tool + 2, s->name)) continue;
        eng_usage_error(o->compare[0][0] && !o->replot[0] ? "--quiet with --compare" :
                       "--out DIR, --overwrite and --quiet with --replot or --combine",
                       "--%s does not apply with %s", s->name, tool);
    }
    if (o->combine[0] && !eng_setting_given(eng_setting_find("out")))
        eng_usage_error("--combine LIST --out DIR", "--combine: name the folder of the combined report with --out");
    if (o->replot[0] && !eng_setting_given(eng_setting_find("out"))) { /* default: the CSV's own folder */
        eng_folder_of(o->replot, o->out, sizeof o->out);
    }
    const char *ck = o->resume[0] ? "--resume" : o->eval[0] ? "--eval" : NULL;
    for (int i = 0; i < eng_setting_count(); i++) {
        const setting *s = eng_setting_at(i);
        if (!eng_setting_given(eng_setting_at(i)) || !s->name) continue;
        if (s->mode == M_NEW && ck)
            eng_usage_error("no training or model settings with --resume/--eval (the checkpoint's are used)",
                           "--%s does not apply with %s", s->name, ck);
        if (s->mode == M_TRAIN && o->eval[0])
            eng_usage_error("no training settings with --eval", "--%s does not apply with --eval", s->name);
        if (s->mode == M_RESUME && !o->resume[0])
            eng_usage_error("--lr-schedule with --resume", "--%s applies only with --resume", s->name);
    }
    if (eng_setting_given(eng_setting_find("rope-ext")) && eng_setting_given(eng_setting_find("rope-scaling")))
        eng_usage_error("one of --rope-scaling and --rope-ext (its older name)",
                       "--rope-scaling and --rope-ext together");
    if (given_cli[eng_setting_index(eng_setting_find("seed"))] && given_cli[eng_setting_index(eng_setting_find("seeds"))])
        eng_usage_error("one of --seed S and --seeds N|LIST", "--seed and --seeds together");
}

void eng_options_parse(int argc, char **argv, eng_options *o)
{
    memset(given_cli, 0, sizeof given_cli);
    eng_settings_clear_given();
    parse_pass(argc, argv, o, 1);
    if (o->config[0]) eng_options_load_config(o, o->config);
    parse_pass(argc, argv, o, 2);
    o->steps_given = eng_setting_given(eng_setting_find("steps"));
    check_modes(o);
}
