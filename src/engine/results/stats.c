/* stats.c: statistics of a report cell over seeds: mean, sample sd, the 95% Student t interval of the mean, a
 * seeded percentile bootstrap interval, and k/N seeds reaching exact match >= 0.5. Values are proportions, so the
 * intervals are clipped to [0, 1]; the maximum over seeds and the median. Also the steps-to-learn of a row (mean, median, k/N of its seeds). */
#include "engine/base/types.h"
#include "engine/results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The continued fraction of the incomplete beta function (A&S 26.5.8), evaluated by the modified Lentz method. */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2)); /* even step */
        d = 1 + num * d;
        c = 1 + num / c;
        if (fabs(d) < tiny) d = tiny;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)); /* odd step */
        d = 1 + num * d;
        c = 1 + num / c;
        if (fabs(d) < tiny) d = tiny;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) < 1e-15) break;
    }
    return h;
}

/* I_x(a, b), the regularized incomplete beta function. */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b; /* symmetry, where the fraction converges fast */
}

double eng_t_cdf(double t, int df)
{
    double tail = 0.5 * inc_beta(0.5 * df, 0.5, df / (df + t * t)); /* P(T > |t|) */
    return t >= 0 ? 1 - tail : tail;
}

double eng_t_quantile(double p, int df)
{
    if (p == 0.5) return 0;
    if (p < 0.5) return -eng_t_quantile(1 - p, df);
    double lo = 0, hi = 1;
    while (eng_t_cdf(hi, df) < p && hi < 1e12) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (eng_t_cdf(mid, df) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* R's type-7 quantile of sorted s[0..n). */
static double quantile7(const double *s, int n, double p)
{
    double h = (n - 1) * p;
    int i = (int)floor(h);
    if (i >= n - 1) return s[n - 1];
    return s[i] + (h - i) * (s[i + 1] - s[i]);
}

void eng_bootstrap_ci(const double *v, int n, int reps, uint64_t seed, double level, double *lo, double *hi)
{
    double *means = malloc(sizeof *means * (size_t)reps);
    if (!means) { *lo = *hi = NAN; return; }
    rg_rng rng;
    rg_rng_seed(&rng, seed, 0x5eed);
    for (int r = 0; r < reps; r++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += v[rg_rng_below(&rng, (uint32_t)n)];
        means[r] = s / n;
    }
    qsort(means, (size_t)reps, sizeof *means, cmp_double);
    *lo = quantile7(means, reps, 0.5 * (1 - level));
    *hi = quantile7(means, reps, 1 - 0.5 * (1 - level));
    free(means);
}

static double clip01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

void eng_stat_compute(const double *v, int n, uint64_t boot_seed, eng_stat *s)
{
    double *fin = malloc(sizeof *fin * 2 * (size_t)(n > 0 ? n : 1));
    *s = ENG_STAT_NONE;
    if (!fin) return;
    double sum = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            fin[s->n++] = v[i];
            sum += v[i];
            s->k += v[i] >= ENG_PASS_EXACT;
        }
    if (s->n > 0) {
        s->mean = sum / s->n;
        double *srt = fin + s->n; /* a sorted copy: the bootstrap resamples fin in the seeds' order */
        memcpy(srt, fin, sizeof *fin * (size_t)s->n);
        qsort(srt, (size_t)s->n, sizeof *srt, cmp_double);
        s->max = srt[s->n - 1];
        s->median = s->n % 2 ? srt[s->n / 2] : 0.5 * (srt[s->n / 2 - 1] + srt[s->n / 2]);
    }
    if (s->n >= 2) {
        double ss = 0;
        for (int i = 0; i < s->n; i++) ss += (fin[i] - s->mean) * (fin[i] - s->mean);
        s->sd = sqrt(ss / (s->n - 1));
        double half = eng_t_quantile(1 - 0.5 * (1 - ENG_CI_LEVEL), s->n - 1) * s->sd / sqrt(s->n);
        s->lo = clip01(s->mean - half);
        s->hi = clip01(s->mean + half);
        eng_bootstrap_ci(fin, s->n, ENG_BOOT_REPS, boot_seed, ENG_CI_LEVEL, &s->boot_lo, &s->boot_hi);
    }
    free(fin);
}

uint64_t eng_cell_seed(rg_task task, rg_pos_kind pos, rg_rope_ext ext, int n, bool exact)
{
    /* splitmix64 finalizer over the packed identity; a registered task by its name's stream, so that its
     * intervals do not depend on the order of registration */
    uint64_t tk = rg_evalset_has(task) ? (uint64_t)task << 56 : rg_task_stream(task, 0) * 0x9e3779b97f4a7c15ULL;
    uint64_t z = tk ^ ((uint64_t)pos << 48) ^ ((uint64_t)ext << 40) ^ ((uint64_t)exact << 32) ^
                 (uint64_t)(uint32_t)n;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ steps-to-learn of a row */


void eng_row_steps_to_learn(const eng_table *t, const eng_row *r, eng_learn_stat *s)
{
    *s = (eng_learn_stat){0, 0, NAN, NAN, 0};
    double v[ENG_MAX_SEEDS];
    for (int i = 0; i < r->n_runs; i++) {
        const eng_result *x = &t->res[r->runs[i]];
        if (x->steps_to_learn == 0) continue;
        s->n++;
        if (x->steps > s->max_steps) s->max_steps = x->steps;
        if (x->steps_to_learn > 0 && s->k < ENG_MAX_SEEDS) v[s->k++] = (double)x->steps_to_learn;
    }
    if (s->k == 0) return;
    qsort(v, (size_t)s->k, sizeof *v, cmp_double);
    double sum = 0;
    for (int i = 0; i < s->k; i++) sum += v[i];
    s->mean = sum / s->k;
    s->median = s->k % 2 ? v[s->k / 2] : 0.5 * (v[s->k / 2 - 1] + v[s->k / 2]);
}

const char *eng_learn_text(const eng_learn_stat *s, char *buf, size_t cap)
{
    if (s->n == 0) snprintf(buf, cap, "n/a");
    else if (s->k == 0) snprintf(buf, cap, "not within %lld · 0/%d", (long long)s->max_steps, s->n);
    else if (s->k == 1) snprintf(buf, cap, "%.0f · 1/%d", s->mean, s->n);
    else snprintf(buf, cap, "%.0f (median %.0f) · %d/%d", s->mean, s->median, s->k, s->n);
    return buf;
}

bool eng_table_has_learn(const eng_table *t)
{
    for (int i = 0; i < t->n_res; i++)
        if (t->res[i].steps_to_learn != 0) return true;
    return false;
}
