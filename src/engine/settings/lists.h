/* lists.h: the list-valued options' parsers and printers (lists.c; --plugin's in plugin_load.c) and --help's lists. */
#ifndef ENG_SETTINGS_LISTS_H
#define ENG_SETTINGS_LISTS_H

#include <stdio.h>

#include "engine/base/types.h"

/* Parsers of the flags' text (modified in place; 0, or -1 when a value is outside the allowed ones) and printers
 * back to that text. */
int to_parse_task(to_options *o, char *v);        /* copy | reverse | sort | all, or a comma list */
int to_parse_pos(to_options *o, char *v);         /* encodings, or all */
int to_parse_pos_config(to_options *o, char *v);
/* The allowed values of --task (tasks true) or --pos: every registered name (built-in, the program's, plugins'). */
void to_allowed_names(bool tasks, char *b, size_t n);
int to_parse_plugin(to_options *o, char *v);      /* a path to_plugins_load loaded (plugin_load.h) */
void to_print_plugin(const to_options *o, char *b, size_t n);  /* NAME=VALUE,... encoding settings into o->model */
int to_parse_seed(to_options *o, char *v);        /* one seed 1..1000000 */
int to_parse_seeds(to_options *o, char *v);       /* N (1..N) or a comma list of distinct seeds */
/* True if cfg holds a value of encoding setting `name` (set with --pos-config or read from a checkpoint), false
 * when it would read the declared default. */
bool to_pos_value_given(const rg_model_config *cfg, const char *name);
/* True if s is a decimal integer (an optional sign, then digits only: no 1e3, 0x10, spaces or fraction). */
bool to_is_decimal_int(const char *s);
int to_parse_test_lens(to_options *o, char *v);   /* up to TO_MAX_LENS distinct lengths 1..TO_MAX_TEST_N */
int to_parse_rope_ext(to_options *o, char *v);    /* pi,ntk,yarn,llama3 | all | none */
int to_parse_lr_schedule(to_options *o, char *v); /* continue | restart */
int to_parse_variants(to_options *o, char *v);    /* base,theta500k,rand,t5max128,bf16angles | all */
void to_print_task(const to_options *o, char *b, size_t n);
void to_print_pos(const to_options *o, char *b, size_t n);
/* NAME=VALUE,... the settings the selected encodings declare, resolved (rg_pos_config_get of o->model) */
void to_print_pos_config(const to_options *o, char *b, size_t n);
void to_print_seeds(const to_options *o, char *b, size_t n);
void to_print_test_lens(const to_options *o, char *b, size_t n);
void to_print_rope_ext(const to_options *o, char *b, size_t n);
void to_print_lr_schedule(const to_options *o, char *b, size_t n);
void to_print_variants(const to_options *o, char *b, size_t n);


/* --help's lists: every registered task and encoding with its summary or doc, the opt-in ones marked. */
void to_print_registries(FILE *f);

#endif
