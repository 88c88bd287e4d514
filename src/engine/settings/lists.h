/* lists.h: the list-valued options' parsers and printers (lists.c; --plugin's in plugin_load.c) and --help's lists. */
#ifndef ENG_SETTINGS_LISTS_H
#define ENG_SETTINGS_LISTS_H

#include <stdio.h>

#include "engine/base/types.h"

/* Parsers of the flags' text (modified in place; 0, or -1 when a value is outside the allowed ones) and printers
 * back to that text. */
int eng_parse_task(eng_options *o, char *v);        /* copy | reverse | sort | all, or a comma list */
int eng_parse_pos(eng_options *o, char *v);         /* encodings, or all */
int eng_parse_pos_config(eng_options *o, char *v);
/* The allowed values of --task (tasks true) or --pos: every registered name (built-in, the program's, plugins'). */
void eng_allowed_names(bool tasks, char *b, size_t n);
int eng_parse_plugin(eng_options *o, char *v);      /* a path eng_plugins_load loaded (plugin_load.h) */
void eng_print_plugin(const eng_options *o, char *b, size_t n);  /* NAME=VALUE,... encoding settings into o->model */
int eng_parse_seed(eng_options *o, char *v);        /* one seed 1..1000000 */
int eng_parse_seeds(eng_options *o, char *v);       /* N (1..N) or a comma list of distinct seeds */
/* True if cfg holds a value of encoding setting `name` (set with --pos-config or read from a checkpoint), false
 * when it would read the declared default. */
bool eng_pos_value_given(const rg_model_config *cfg, const char *name);
/* True if s is a decimal integer (an optional sign, then digits only: no 1e3, 0x10, spaces or fraction). */
bool eng_is_decimal_int(const char *s);
int eng_parse_test_lens(eng_options *o, char *v);   /* up to ENG_MAX_LENS distinct lengths 1..ENG_MAX_TEST_N */
int eng_parse_rope_ext(eng_options *o, char *v);    /* pi,ntk,yarn,llama3 | all | none */
int eng_parse_lr_schedule(eng_options *o, char *v); /* continue | restart */
int eng_parse_variants(eng_options *o, char *v);    /* base,theta500k,rand,t5max128,bf16angles | all */
/* --sizes: up to ENG_MAX_SIZES distinct items of eng_size_parse ("64x2,128x4h8"), comma-separated */
int eng_parse_sizes(eng_options *o, char *v);
void eng_print_sizes(const eng_options *o, char *b, size_t n);
void eng_print_task(const eng_options *o, char *b, size_t n);
void eng_print_pos(const eng_options *o, char *b, size_t n);
/* NAME=VALUE,... the settings the selected encodings declare, resolved (rg_pos_config_get of o->model) */
void eng_print_pos_config(const eng_options *o, char *b, size_t n);
void eng_print_seeds(const eng_options *o, char *b, size_t n);
void eng_print_test_lens(const eng_options *o, char *b, size_t n);
void eng_print_rope_ext(const eng_options *o, char *b, size_t n);
void eng_print_lr_schedule(const eng_options *o, char *b, size_t n);
void eng_print_variants(const eng_options *o, char *b, size_t n);


/* --help's lists: every registered task and encoding with its summary or doc, the opt-in ones marked. */
void eng_print_registries(FILE *f);

#endif
