/* pos_conformance.c: the conformance check of one registered position encoding (pos_conformance.h): op-level and
 * model-level gradients against central differences, KV-cache decoding against the full forward, a checkpoint round
 * trip, shift invariance for relative encodings, and RoPE scaling for rotary ones. Built in both precisions; the
 * step and bounds follow from the build's epsilon. */
#include "pos_conformance.h"
#include "nn.h"
#include "../autograd/autograd.h"
#include "../io/checkpoint.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef RG_DOUBLE
#define EPS DBL_EPSILON
#else
#define EPS FLT_EPSILON
#endif

/* The shapes: two rows of six tokens, the first row spread from 0 to 199 (past 150, and with gaps), the second
 * 150..155; a model of 2 layers, width 16, 2 heads (head_dim 8: every rotary layout and M-RoPE's sections fit). */
enum { NB = 2, NT = 6, ND = 16, NH = 2, NL = 2, VOCAB = 11, MAX_LEN = 200, SHIFT = 37, MAX_IN = 64 };
static const int32_t POS[NB * NT] = {0, 2, 3, 150, 151, 199, 150, 151, 152, 153, 154, 155};
static const int32_t TOKENS[NB * NT] = {1, 5, 2, 6, 10, 3, 0, 3, 3, 4, 9, 7};
#define N_WEIGHTS 4099 /* the random loss weights, cycled (a prime: no alignment with any shape) */
#define ELEM_CAP 8192  /* op level: every element of a tensor up to this many */
#define MODEL_TOP 4    /* model level: the elements of largest analytic gradient, and as many random ones */

double rg_pos_conformance_step(void) { return cbrt(EPS); }

/* The shift check's bound is SHIFT_NOISE times the encoding's own rounding noise (at least e): the kv-cache
 * check's difference, the same logits computed in another order, equal in exact arithmetic. A relative encoding's
 * shifted logits differ by rounding only (RoPE: its cos/sin rows at other positions), as much as that noise or
 * less (0.3x to 0.9x for every built-in, in both builds); an absolute position term of any size above a few ulps
 * fails. A fixed multiple of e would not do: float32's 1e4 e (1.2e-3) let an encoding that adds absolute positions
 * pass. */
#define SHIFT_NOISE 16

/* Multiples of the build's epsilon: gradients at e^(2/3) (the error of central differences at their best step),
 * logits at e (rounding only). The factors hold every built-in with margin (the measured errors:
 * results/extending-examples/). "shift": the least bound, SHIFT_NOISE e (the check's own is SHIFT_NOISE times its
 * measured noise, see above). */
double rg_pos_conformance_bound(const char *check)
{
    double e23 = pow(EPS, 2.0 / 3.0);
    if (!strcmp(check, "grad model")) return 1e4 * e23;
    if (!strncmp(check, "grad", 4)) return 3e3 * e23;
    if (!strcmp(check, "checkpoint")) return 0;
    if (!strncmp(check, "rope_scaling", 12)) return 1e-4; /* the least relative change of the logits accepted */
    if (!strcmp(check, "shift")) return SHIFT_NOISE * EPS;
    return 1e4 * EPS; /* kv-cache */
}

typedef struct {
    const rg_pos_report *rep;
    const char *name;
    int failed;
    double noise; /* the logits' rounding noise: the kv-cache check's difference when it passed, else 0 */
    rg_real w[N_WEIGHTS];
} run;

static void emit(run *r, const char *check, double err, double bound, bool at_least, const char *detail)
{
    rg_pos_check l = {.encoding = r->name, .error = err, .bound = bound};
    snprintf(l.check, sizeof l.check, "%s", check);
    snprintf(l.detail, sizeof l.detail, "%s", detail ? detail : "");
    l.pass = at_least ? err >= bound : err <= bound; /* NaN fails both */
    if (!l.pass) r->failed++;
    if (r->rep && r->rep->file)
        fprintf(r->rep->file, "%s %-14s %-20s %9.3g %s %-9.3g %s\n", l.pass ? "PASS" : "FAIL", r->name, l.check,
                err, at_least ? ">=" : "<=", bound, l.detail);
    if (r->rep && r->rep->fn) r->rep->fn(&l, r->rep->user);
}

/* ------------------------------------------------------------------ gradients against central differences */

/* A function under test: its outputs (up to 4 tensors) for the current inputs; the loss is sum(w * out). */
typedef int (*build_fn)(rg_ctx *c, void *u, rg_tensor **out);

static double loss_value(run *r, rg_tensor **out, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++)
        for (int64_t i = 0; i < out[k]->numel; i++) s += (double)out[k]->data[i] * r->w[(i + 977 * k) % N_WEIGHTS];
    return s;
}

static rg_tensor *loss_node(run *r, rg_ctx *c, rg_tensor **out, int n)
{
    rg_tensor *sum = NULL;
    for (int k = 0; k < n; k++) {
        rg_tensor *w = rg_tensor_new(c, out[k]->ndim, out[k]->shape);
        for (int64_t i = 0; i < w->numel; i++) w->data[i] = r->w[(i + 977 * k) % N_WEIGHTS];
        rg_tensor *t = rg_sum(c, rg_mul(c, out[k], w));
        sum = sum ? rg_add(c, sum, t) : t;
    }
    return sum;
}

/* The elements of x to check: all (op level, up to ELEM_CAP), or the MODEL_TOP of largest analytic gradient and
 * MODEL_TOP random others. Returns their number. */
static int pick(const rg_tensor *x, bool all, rg_rng *rng, int64_t *idx)
{
    if (all) {
        int n = x->numel < ELEM_CAP ? (int)x->numel : ELEM_CAP;
        for (int i = 0; i < n; i++) idx[i] = i;
        return n;
    }
    int n = 0;
    for (int k = 0; k < MODEL_TOP && k < x->numel; k++) {
        int64_t best = -1;
        for (int64_t j = 0; j < x->numel; j++) {
            bool taken = false;
            for (int i = 0; i < n; i++) taken = taken || idx[i] == j;
            if (!taken && (best < 0 || fabs((double)x->grad[j]) > fabs((double)x->grad[best]))) best = j;
        }
        idx[n++] = best;
    }
    for (int k = 0; k < MODEL_TOP && n < x->numel; k++) {
        int64_t j;
        bool taken;
        do {
            j = (int64_t)rg_rng_below(rng, (uint32_t)x->numel);
            taken = false;
            for (int i = 0; i < n; i++) taken = taken || idx[i] == j;
        } while (taken);
        idx[n++] = j;
    }
    return n;
}

/* fd and an of the picked elements of every input; returns -1 if the function failed (message set). */
static int differences(run *r, build_fn f, void *u, rg_tensor **in, int n_in, bool all, double *(*fd)[3],
                       double **an, int *count)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *out[4];
    for (int i = 0; i < n_in; i++) rg_zero_grad(in[i]);
    int n = f(c, u, out);
    if (n < 0) { rg_ctx_free(c); return -1; }
    double f0 = loss_value(r, out, n);
    rg_tensor *loss = loss_node(r, c, out, n);
    if (loss && loss->requires_grad) rg_backward(c, loss, NULL); /* else a constant (ALiBi's bias): gradient 0 */
    rg_rng rng;
    rg_rng_seed(&rng, 11, 3);
    const double h = rg_pos_conformance_step();
    int64_t *idx = malloc(ELEM_CAP * sizeof *idx);
    for (int i = 0; i < n_in && n >= 0; i++) {
        rg_tensor *x = in[i];
        count[i] = pick(x, all, &rng, idx);
        for (int k = 0; k < 3; k++) fd[i][k] = malloc((size_t)count[i] * sizeof(double));
        an[i] = malloc((size_t)count[i] * sizeof(double));
        for (int e = 0; e < count[i] && n >= 0; e++) {
            int64_t j = idx[e];
            rg_real v = x->data[j];
            double side[2];
            for (int s = 0; s < 2 && n >= 0; s++) {
                x->data[j] = v + (rg_real)(s ? -h : h);
                rg_tensor_bump_version(x); /* copies made from the data (a cached transpose) are made again */
                rg_ctx_reset(c);
                bool old = rg_set_grad_enabled(c, false);
                n = f(c, u, out);
                rg_set_grad_enabled(c, old);
                if (n >= 0) side[s] = loss_value(r, out, n);
            }
            x->data[j] = v;
            rg_tensor_bump_version(x);
            /* the steps actually taken (v + h rounds in float32); central, forward and backward differences */
            double up = (double)(rg_real)(v + (rg_real)h) - (double)v;
            double down = (double)v - (double)(rg_real)(v - (rg_real)h);
            if (n >= 0) {
                fd[i][0][e] = (side[0] - side[1]) / (up + down);
                fd[i][1][e] = (side[0] - f0) / up;
                fd[i][2][e] = (f0 - side[1]) / down;
            }
            an[i][e] = (double)x->grad[j];
        }
    }
    free(idx);
    rg_ctx_free(c);
    return n < 0 ? -1 : 0;
}

/* One gradient check: the worst per-tensor error (pos_conformance.h) and its tensor's name. -1 if f failed.
 * An element is compared with the nearest of its central, forward and backward differences: where the function has
 * a kink within the step (a ReLU of FIRE's MLP whose input crosses 0: the one-sided differences disagree), the
 * analytic gradient is one of the one-sided ones, as PyTorch's subgradient is; a wrong gradient is far from all
 * three. */
static int grad_check(run *r, const char *check, build_fn f, void *u, rg_tensor **in, int n_in, bool all)
{
    double *fd[MAX_IN][3] = {{0}}, *an[MAX_IN] = {0}, G = 0, worst = 0;
    int count[MAX_IN] = {0}, at = -1;
    int rc = differences(r, f, u, in, n_in, all, fd, an, count);
    for (int i = 0; i < n_in && !rc; i++)
        for (int e = 0; e < count[i]; e++) G = fmax(G, fmax(fabs(fd[i][0][e]), fabs(an[i][e])));
    for (int i = 0; i < n_in && !rc; i++)
        for (int e = 0; e < count[i]; e++) {
            double d = INFINITY;
            for (int k = 0; k < 3; k++) {
                double x = fd[i][k][e], y = an[i][e];
                double dk = fabs(x - y) / fmax(fmax(fabs(x), fabs(y)), fmax(1e-2 * G, 1e-300));
                if (dk < d || isnan(dk)) d = isnan(d) ? d : dk; /* NaN stays the worst */
            }
            if (!(d <= worst)) { worst = d; at = i; } /* NaN is the worst */
        }
    for (int i = 0; i < n_in; i++) {
        for (int k = 0; k < 3; k++) free(fd[i][k]);
        free(an[i]);
    }
    if (rc) return -1;
    char detail[128];
    snprintf(detail, sizeof detail, "%d tensors, scale %.2g%s%s", n_in, G, at >= 0 ? ", worst " : "",
             at >= 0 ? in[at]->name : "");
    emit(r, check, worst, rg_pos_conformance_bound(check), false, detail);
    return 0;
}

/* ------------------------------------------------------------------ op level: the hooks on their own */

typedef struct {
    const rg_pos_encoding *enc;
    rg_model_config cfg;
    void *state;
    rg_params ps;
    rg_pos_summary sum;
    rg_tensor *x[3];    /* q, k, and the token embeddings tok */
    int hook;           /* 0 input, 1 rotate_qk, 2 score_bias */
} op_case;

static int build_op(rg_ctx *c, void *u, rg_tensor **out)
{
    op_case *o = u;
    if (o->hook == 0) {
        rg_tensor *h = o->x[2];
        if (o->enc->input(c, o->state, &o->sum, o->x[2], &h)) return -1;
        out[0] = h;
        return 1;
    }
    void *prep = o->enc->prepare ? o->enc->prepare(c, o->state, &o->cfg, &o->sum) : NULL;
    if (o->hook == 1) {
        out[0] = o->x[0];
        out[1] = o->x[1];
        o->enc->rotate_qk(c, prep, &out[0], &out[1]);
        return 2;
    }
    int n = 0;
    for (int l = 0; l < NL; l++) { /* the bias of every layer, its causally masked entries weighted 0 */
        rg_tensor *b = o->enc->score_bias(c, o->state, prep, l, &o->sum, o->x[0], o->x[1]);
        if (!b) continue;
        rg_tensor *m = rg_tensor_new(c, b->ndim, b->shape);
        int S = b->shape[b->ndim - 1], T = b->shape[b->ndim - 2];
        for (int64_t i = 0; i < m->numel; i++)
            m->data[i] = !o->cfg.causal || (int)(i % S) <= (int)(i / S % T) + S - T ? 1 : 0;
        out[n++] = rg_mul(c, b, m);
    }
    return n;
}

static const char *const HOOK_CHECK[3] = {"grad input", "grad rotate_qk", "grad score_bias"};

/* The encoding's state and parameters outside a model (every site of NL layers), and a check per hook. */
static rg_status op_checks(run *r, const rg_pos_encoding *enc, const rg_model_config *cfg)
{
    op_case o = {.enc = enc, .cfg = *cfg};
    rg_rng rng;
    rg_rng_seed(&rng, 5, 9);
    rg_status st = enc->state_new ? enc->state_new(&o.cfg, &o.state) : RG_OK;
    for (int s = 0; s < 4 && !st && enc->add_params; s++)
        for (int l = (s == 1 || s == 2) ? 0 : -1; l < ((s == 1 || s == 2) ? NL : 0) && !st; l++)
            st = enc->add_params(o.state, &o.cfg, (rg_pos_site)s, l, &o.ps, &rng);
    rg_pos_summarize(&o.sum, POS, POS, NB, NT, NT);
    for (int k = 0; k < 3; k++) {
        o.x[k] = rg_param_new(k == 0 ? "q" : k == 1 ? "k" : "tok", 3, (int[]){NB, NT, ND});
        for (int64_t i = 0; i < o.x[k]->numel; i++) o.x[k]->data[i] = (rg_real)rg_rng_normal(&rng);
    }
    const bool has[3] = {enc->input != NULL, enc->rotate_qk != NULL, enc->score_bias != NULL};
    for (int hk = 0; hk < 3 && !st; hk++) {
        if (!has[hk]) continue;
        rg_tensor *in[MAX_IN];
        int n = 0;
        if (hk == 0) in[n++] = o.x[2];
        else { in[n++] = o.x[0]; in[n++] = o.x[1]; }
        for (int i = 0; i < o.ps.n && n < MAX_IN; i++) in[n++] = o.ps.items[i];
        o.hook = hk;
        if (grad_check(r, HOOK_CHECK[hk], build_op, &o, in, n, true)) st = rg_error(RG_ERR_ARG, "%s", rg_last_error());
    }
    if (!has[0] && !has[1] && !has[2]) emit(r, "grad hooks", 0, 0, false, "no input, rotate_qk or score_bias hook");
    for (int k = 0; k < 3; k++) rg_param_free(o.x[k]);
    rg_params_free(&o.ps);
    if (o.state && enc->state_free) enc->state_free(o.state);
    return st;
}

/* ------------------------------------------------------------------ model level */

typedef struct {
    rg_model *m;
    const int32_t *pos;
} model_case;

static int build_model(rg_ctx *c, void *u, rg_tensor **out)
{
    model_case *mc = u;
    return rg_model_forward(c, mc->m, TOKENS, mc->pos, NB, NT, NULL, &out[0]) ? -1 : 1;
}

/* The logits of a full forward at positions pos into out [NB * NT * VOCAB]; RG_OK or the forward's error. */
static rg_status logits_of(rg_model *m, const int32_t *pos, double *out)
{
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *lg;
    rg_status st = rg_model_forward(c, m, TOKENS, pos, NB, NT, NULL, &lg);
    for (int64_t i = 0; !st && i < lg->numel; i++) out[i] = (double)lg->data[i];
    rg_ctx_free(c);
    return st;
}

/* max |a - b| / max |b| over n values */
static double rel_diff(const double *a, const double *b, int n)
{
    double d = 0, s = 1e-300;
    for (int i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]);
        if (!(e <= d)) d = e;
        s = fmax(s, fabs(b[i]));
    }
    return d / s;
}

/* Prefill 3 tokens of each row, then one token per forward, against the full forward's logits. */
static rg_status kv_check(run *r, rg_model *m, const double *full)
{
    enum { N = NB * NT * VOCAB };
    double got[N];
    rg_kv_cache kv;
    rg_status st = rg_kv_cache_init(&kv, m, NB, NT);
    if (st) return st;
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    for (int t0 = 0, len = 3; t0 < NT && !st; t0 += len, len = 1) {
        int32_t tok[NB * NT], pos[NB * NT];
        for (int b = 0; b < NB; b++)
            for (int t = 0; t < len; t++) {
                tok[b * len + t] = TOKENS[b * NT + t0 + t];
                pos[b * len + t] = POS[b * NT + t0 + t];
            }
        rg_ctx_reset(c);
        rg_tensor *lg;
        st = rg_model_forward(c, m, tok, pos, NB, len, &kv, &lg);
        for (int b = 0; b < NB && !st; b++)
            for (int t = 0; t < len; t++)
                for (int v = 0; v < VOCAB; v++)
                    got[(b * NT + t0 + t) * VOCAB + v] = (double)lg->data[(b * len + t) * VOCAB + v];
    }
    rg_ctx_free(c);
    rg_kv_cache_free(&kv);
    double d = rel_diff(got, full, N), bound = rg_pos_conformance_bound("kv-cache");
    if (!st) emit(r, "kv-cache", d, bound, false, "prefill 3, then 1 token per forward");
    if (!st && d <= bound) r->noise = d;
    return st;
}

/* Save, reopen: the same logits bit for bit. */
static rg_status ckpt_check(run *r, rg_model *m, const double *full)
{
    enum { N = NB * NT * VOCAB };
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/rg_conformance_XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return rg_error(RG_ERR_IO, "conformance: cannot create a temporary file %s", path);
    close(fd);
    rg_model *m2 = NULL;
    double got[N];
    rg_status st = rg_checkpoint_save(path, m, NULL, NULL);
    if (!st) st = rg_checkpoint_open(path, &m2, NULL, NULL);
    if (!st) st = logits_of(m2, POS, got);
    unlink(path);
    rg_model_free(m2);
    if (!st) emit(r, "checkpoint", rel_diff(got, full, N), 0, false, "rg_checkpoint_save, rg_checkpoint_open");
    return st;
}

static rg_status shift_check(run *r, rg_model *m, const double *full)
{
    enum { N = NB * NT * VOCAB };
    int32_t pos[NB * NT];
    double got[N];
    for (int i = 0; i < NB * NT; i++) pos[i] = POS[i] + SHIFT;
    rg_status st = logits_of(m, pos, got);
    char detail[128];
    snprintf(detail, sizeof detail, "every position + 37 (declared RG_POS_RELATIVE); bound %d x max(noise %.2g, e)",
             SHIFT_NOISE, r->noise);
    if (!st) emit(r, "shift", rel_diff(got, full, N), SHIFT_NOISE * fmax(r->noise, EPS), false, detail);
    return st;
}

/* Each scaling type at factor 2 over an original length 24 must change the logits past 24. */
static rg_status scaling_check(run *r, rg_model *m, const double *full)
{
    enum { N = NB * NT * VOCAB };
    static const rg_rope_ext EXT[] = {RG_ROPE_EXT_PI, RG_ROPE_EXT_NTK, RG_ROPE_EXT_YARN, RG_ROPE_EXT_LLAMA3,
                                      RG_ROPE_EXT_DYNAMIC};
    rg_rope_scaling none = rg_model_rope_scaling(m);
    rg_status st = RG_OK;
    for (size_t i = 0; i < sizeof EXT / sizeof *EXT && !st; i++) {
        rg_rope_scaling s = none;
        s.rope_type = EXT[i];
        s.factor = 2;
        s.original_max_position_embeddings = 24;
        double got[N];
        st = rg_model_set_rope_scaling(m, &s);
        if (!st) st = logits_of(m, POS, got);
        char check[48];
        snprintf(check, sizeof check, "rope_scaling %s", rg_rope_ext_name(EXT[i]));
        if (!st) emit(r, check, rel_diff(got, full, N), rg_pos_conformance_bound(check), true,
                      "factor 2 over length 24: the logits change");
    }
    rg_model_set_rope_scaling(m, &none);
    return st;
}

static rg_status model_checks(run *r, const rg_model_config *cfg)
{
    enum { N = NB * NT * VOCAB };
    rg_model *m;
    rg_status st = rg_model_new(cfg, 7, &m);
    if (st) return st;
    model_case mc = {m, POS};
    if (m->params.n > MAX_IN) st = rg_error(RG_ERR_ARG, "conformance: more than %d parameter tensors", MAX_IN);
    if (!st && grad_check(r, "grad model", build_model, &mc, m->params.items, m->params.n, false))
        st = rg_error(RG_ERR_ARG, "%s", rg_last_error());
    double full[N];
    if (!st) st = logits_of(m, POS, full);
    if (!st) st = kv_check(r, m, full);
    if (!st) st = ckpt_check(r, m, full);
    if (!st && (m->pos->flags & RG_POS_RELATIVE)) st = shift_check(r, m, full);
    if (!st && (m->pos->flags & RG_POS_ROTARY)) st = scaling_check(r, m, full);
    rg_model_free(m);
    return st;
}

rg_status rg_pos_conformance(const char *name, const rg_pos_report *report, int *n_failed)
{
    rg_pos_kind id;
    if (n_failed) *n_failed = 0;
    if (!name || rg_pos_parse(name, &id)) return rg_error(RG_ERR_ARG, "conformance: %s", rg_last_error());
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = VOCAB;
    cfg.d_model = ND;
    cfg.n_heads = NH;
    cfg.n_layers = NL;
    cfg.d_ff = 2 * ND;
    cfg.max_len = MAX_LEN;
    cfg.pos = id;
    if (rg_model_config_validate(&cfg))
        return rg_error(RG_ERR_ARG, "conformance of '%s': the check's config (d_model %d, %d heads, %d layers, "
                        "max_len %d) is refused: %s", name, ND, NH, NL, MAX_LEN, rg_last_error());
    run *r = malloc(sizeof *r);
    if (!r) return rg_error(RG_ERR_NOMEM, "conformance: out of memory");
    *r = (run){.rep = report, .name = rg_pos_name(id)};
    rg_rng rng;
    rg_rng_seed(&rng, 3, 1);
    for (int i = 0; i < N_WEIGHTS; i++) r->w[i] = (rg_real)rg_rng_normal(&rng);
    rg_status st = op_checks(r, rg_pos_encoding_of(id), &cfg);
    if (!st) st = model_checks(r, &cfg);
    if (n_failed) *n_failed = r->failed;
    free(r);
    return st;
}
