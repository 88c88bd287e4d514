/* messages.c: the engine's messages and its name for itself: the program's name (argv[0]'s last part, so a program
 * built on the engine names itself), a message on stderr, and the usage error that exits with status 2. Every layer
 * reports through these, so they sit at the bottom. */
#include "engine/base/messages.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char prog[256] = "train_order";

const char *eng_prog(void) { return prog; }

void eng_set_prog(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    const char *base = slash ? slash + 1 : argv0;
    if (base && *base) snprintf(prog, sizeof prog, "%s", base);
}

_Noreturn void eng_usage_error(const char *allowed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", eng_prog());
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  allowed: %s\n  (%s --help lists every option)\n", allowed, eng_prog());
    exit(2);
}

void eng_err(const char *fmt, ...)
{
    char buf[8192];
    int n = snprintf(buf, sizeof buf, "%s: ", eng_prog());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    fputs(buf, stderr); /* one write, so that messages of parallel runs do not interleave within a line */
}
