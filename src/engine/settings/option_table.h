/* option_table.h: the option table's rows, shared by option_table.c (the table, --print-config), command_line.c,
 * config.c (--config) and settings_run.c (the checkpoint's /run group). Internal to the settings layer: the rest of
 * the engine uses settings.h. */
#ifndef ENG_SETTINGS_OPTION_TABLE_H
#define ENG_SETTINGS_OPTION_TABLE_H

#include "engine/base/types.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum { K_INT, K_DOUBLE, K_BOOL, K_PATH, K_LIST, K_ACTION } kind;
/* the modes an option applies to: any; a new run only (the checkpoint's value is used by --resume / --eval);
 * training (a new run or --resume, not --eval); --resume only; a report tool (--replot, --compare: only --out
 * with --replot and --quiet go with them) */
typedef enum { M_ANY, M_NEW, M_TRAIN, M_RESUME, M_TOOL } mode;

typedef struct setting setting;
struct setting {
    const char *name;        /* flag without "--"; NULL ends the table */
    kind kind;
    mode mode;
    bool run;                /* stored in the checkpoint's /run group (int64; K_LIST rows: their text) */
    size_t off;              /* field of eng_options (int, double, bool or char[ENG_PATH]) */
    double lo, hi;           /* numbers: allowed range; lo_open: lo itself excluded */
    bool lo_open;
    int (*parse)(eng_options *o, char *value);               /* K_LIST: 0, or -1 (allowed text in list_allowed) */
    void (*print)(const eng_options *o, char *buf, size_t n); /* K_LIST */
    const char *arg, *help, *allowed;
    const char *key;         /* rows without a flag: the /run key */
};


/* Row i of the table (0 .. rows - 1), or NULL past the last row. */
const setting *eng_setting_at(int i);
/* The row of flag name (without "--"), or NULL. */
const setting *eng_setting_find(const char *name);
/* The row's key in --config / --print-config JSON and in /run: the flag's name with '_' for '-', or the key of a
 * row without a flag. Writes at most n bytes to buf and returns buf. */
const char *eng_setting_key(const setting *s, char *buf, size_t n);
/* What the row allows, in words ("an integer from 1 to 100000000"), for messages. */
void eng_setting_allowed(const setting *s, char *buf, size_t n);
/* Checks v against the row's limits (and integrality) and stores it in o. 0, or -1 when v is outside them (o is
 * then unchanged). */
int eng_setting_set_number(const setting *s, eng_options *o, double v);
/* Whether the row was given on the command line or in --config (after eng_options_parse). */
bool eng_setting_given(const setting *s);
/* Whether the row's value came from the checkpoint of --resume / --eval (settings_run.c): a /run row, or an
 * evaluation setting the checkpoint stored and the command line did not give. */
bool eng_setting_stored(const setting *s);

#define ENG_SETTINGS_MAX 128 /* rows of the table, at most */

/* Forgets which settings were given (the start of a parse). */
void eng_settings_clear_given(void);
/* The value of setting s in o as its text (the flag's value form). */
void eng_setting_format(const setting *s, const eng_options *o, char *b, size_t n);
/* The number of settings, a setting's index in the table, and a setting marked as given (by --config). */
int eng_setting_count(void);
int eng_setting_index(const setting *s);
void eng_setting_mark_given(const setting *s);
/* The setting of a JSON key (the option's name with '_' for '-'), or NULL. */
const setting *eng_setting_find_key(const char *key);
/* Applies the text value of one option (NULL: a flag without value, i.e. true). origin names where the value
 * came from, for the message. Exits 2 on a bad value. */
void eng_setting_apply(const setting *s, eng_options *o, const char *value, const char *origin);
/* --config FILE into o (config.c): exits 2 with a message naming the file on anything it cannot use. */
void eng_options_load_config(eng_options *o, const char *path);

#endif
