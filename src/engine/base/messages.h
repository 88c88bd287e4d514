/* messages.h: the engine's messages (messages.c): the program's name, a message on stderr, the usage error. */
#ifndef ENG_BASE_MESSAGES_H
#define ENG_BASE_MESSAGES_H

/* The message helper for usage errors: "train_order: <what>\n  allowed: <allowed>", exit 2. */
_Noreturn void eng_usage_error(const char *allowed, const char *fmt, ...);
/* A message on stderr, "<program>: " and fmt's text in one write. */
void eng_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The program's name for messages, usage and --help: the base name of argv[0] (set by eng_set_prog at the start of
 * rg_engine_main), or "train_order" before that. */
const char *eng_prog(void);
void eng_set_prog(const char *argv0);

#endif
