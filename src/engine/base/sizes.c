/* sizes.c: a model size's text, one item of --sizes: "128x4" (d_model x n_layers), and optionally "h8" (n_heads)
 * and "f256" (d_ff) after it, "128x4h8f256". The same text names the size in run names, row labels, report.csv's
 * size column and the checkpoint's /run size, so it is parsed and printed here, at the bottom. */
#include "engine/base/sizes.h"

#include <stdio.h>
#include <string.h>

/* A decimal number of at most 9 digits at *p in [1, hi], *p advanced past it. 0, or -1. */
static int number(const char **p, int hi, int *v)
{
    const char *q = *p;
    long x = 0;
    int digits = 0;
    while (*q >= '0' && *q <= '9') {
        if (++digits > 9) return -1; /* no overflow: 9 digits fit a long */
        x = 10 * x + (*q++ - '0');
    }
    if (!digits || x < 1 || x > hi) return -1;
    *v = (int)x;
    *p = q;
    return 0;
}

int eng_size_parse(const char *text, eng_size *s)
{
    memset(s, 0, sizeof *s);
    const char *p = text;
    if (number(&p, 4096, &s->d_model) || *p++ != 'x' || number(&p, 64, &s->n_layers)) return -1;
    if (*p == 'h' && (++p, number(&p, 256, &s->n_heads))) return -1;
    if (*p == 'f' && (++p, number(&p, 65536, &s->d_ff))) return -1;
    if (*p) return -1;
    int n = snprintf(s->text, sizeof s->text, "%dx%d", s->d_model, s->n_layers);
    if (s->n_heads) n += snprintf(s->text + n, sizeof s->text - (size_t)n, "h%d", s->n_heads);
    if (s->d_ff) snprintf(s->text + n, sizeof s->text - (size_t)n, "f%d", s->d_ff);
    return 0;
}

void eng_size_resolve(eng_size *s, int default_heads)
{
    if (!s->n_heads) s->n_heads = default_heads;
    if (!s->d_ff) s->d_ff = 4 * s->d_model;
}

void eng_size_apply(const eng_size *s, rg_model_config *cfg)
{
    cfg->d_model = s->d_model;
    cfg->n_layers = s->n_layers;
    cfg->n_heads = s->n_heads;
    cfg->d_ff = s->d_ff;
}
