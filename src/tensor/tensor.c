/* tensor.c: errors, the arena, the step context, tensor and parameter creation. See tensor.h. */
#include "tensor.h"
#include "blas.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define RG_MXCSR_FTZ_DAZ 0x8040u /* bit 15 flush-to-zero, bit 6 denormals-are-zero */
#endif

/* ---------------------------------------------------------------- errors */

static _Thread_local char last_error[1024];

rg_status rg_error(rg_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *rg_last_error(void) { return last_error; }

void rg_error_clear(void) { last_error[0] = 0; }

void rg_fatal(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ropegrad: fatal: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* ---------------------------------------------------------------- out of memory */

static _Thread_local jmp_buf *oom_escape; /* the innermost rg_oom_try of this thread, or NULL */

rg_status rg_oom_try(rg_status (*fn)(void *arg), void *arg)
{
    jmp_buf env;
    jmp_buf *volatile outer = oom_escape;
    if (setjmp(env)) {
        oom_escape = outer;
        return RG_ERR_NOMEM;
    }
    oom_escape = &env;
    rg_status st = fn(arg);
    oom_escape = outer;
    return st;
}

void rg_oom(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (oom_escape) longjmp(*oom_escape, 1);
    rg_fatal(__FILE__, __LINE__, "%s", last_error);
}

/* ---------------------------------------------------------------- arena */

struct rg_arena_block {
    rg_arena_block *next; /* the older block */
    size_t cap, used;
    unsigned char *mem;   /* 64-byte aligned */
};

#define RG_ALIGN 64
#define RG_ARENA_MIN_BLOCK ((size_t)1 << 20)

static rg_arena_block *block_new(rg_arena *a, size_t cap)
{
    rg_arena_block *b = malloc(sizeof *b);
    void *mem = NULL;
    if (!b || posix_memalign(&mem, RG_ALIGN, cap) != 0) {
        free(b);
        rg_oom("arena: out of memory allocating a block of %zu bytes (arena holds %zu bytes)", cap, a->used);
    }
    b->mem = mem;
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
    a->n_mallocs++;
    return b;
}

void *rg_arena_alloc(rg_arena *a, size_t bytes)
{
    size_t need = (bytes + RG_ALIGN - 1) & ~(size_t)(RG_ALIGN - 1);
    if (need == 0) need = RG_ALIGN;
    rg_arena_block *b = a->head;
    if (!b || b->cap - b->used < need) {
        size_t cap = b ? 2 * b->cap : RG_ARENA_MIN_BLOCK;
        while (cap < need) cap *= 2;
        b = block_new(a, cap);
    }
    void *p = b->mem + b->used;
    b->used += need;
    a->used += need;
    a->bytes_total += need;
    if (a->used > a->high_water) a->high_water = a->used;
    return p;
}

void *rg_arena_calloc(rg_arena *a, size_t bytes)
{
    void *p = rg_arena_alloc(a, bytes);
    memset(p, 0, bytes);
    return p;
}

void rg_arena_reset(rg_arena *a)
{
    rg_arena_block *b = a->head;
    if (b && b->next) {
        /* several blocks: replace them by one that holds the whole high-water mark */
        size_t total = 0;
        while (b) {
            rg_arena_block *next = b->next;
            total += b->cap;
            free(b->mem);
            free(b);
            b = next;
        }
        a->head = NULL;
        if (total < a->high_water) total = a->high_water;
        block_new(a, total);
    } else if (b) {
        b->used = 0;
    }
    a->used = 0;
}

bool rg_arena_owns(const rg_arena *a, const void *p)
{
    uintptr_t q = (uintptr_t)p;
    for (const rg_arena_block *b = a->head; b; b = b->next)
        if (q >= (uintptr_t)b->mem && q < (uintptr_t)b->mem + b->cap) return true;
    return false;
}

void rg_arena_free(rg_arena *a)
{
    rg_arena_block *b = a->head;
    while (b) {
        rg_arena_block *next = b->next;
        free(b->mem);
        free(b);
        b = next;
    }
    memset(a, 0, sizeof *a);
}

/* ---------------------------------------------------------------- context */

bool rg_flush_denormals(bool on)
{
#ifdef RG_MXCSR_FTZ_DAZ
    unsigned csr = _mm_getcsr();
    bool was = (csr & RG_MXCSR_FTZ_DAZ) == RG_MXCSR_FTZ_DAZ;
    _mm_setcsr(on ? csr | RG_MXCSR_FTZ_DAZ : csr & ~RG_MXCSR_FTZ_DAZ);
    return was;
#else
    (void)on;
    return false;
#endif
}

static pthread_once_t workers_once = PTHREAD_ONCE_INIT;

rg_ctx *rg_ctx_new(void)
{
    rg_flush_denormals(true); /* tensor.h: the library computes with FTZ and DAZ */
    pthread_once(&workers_once, rg_blas_restart_workers); /* OpenBLAS's workers started before main: restart them */
    rg_ctx *c = calloc(1, sizeof *c);
    if (!c) RG_FATAL("out of memory allocating a context");
    c->grad_enabled = true;
    c->generation = 1;
    rg_derivation_begin(); /* a new context starts a step: parameters as they are now (tensor.h rg_derived) */
    return c;
}

void rg_ctx_free(rg_ctx *c)
{
    if (!c) return;
    rg_arena_free(&c->arena);
    free(c->tape);
    free(c);
}

/* Derivation epochs (tensor.h, rg_derived): a thread's epoch is a number taken from one process-wide counter, so
 * that no two threads (and no two epochs of one thread) share one: a copy made on one thread is never current on
 * another, and threads running separate models do not make each other's copies again. 0 means "none yet". */
static atomic_uint_fast64_t epochs_issued;
static _Thread_local uint64_t epoch;
static _Thread_local int epoch_held; /* depth of rg_derivation_hold(true) calls */

void rg_derivation_begin(void)
{
    if (epoch_held == 0) epoch = atomic_fetch_add_explicit(&epochs_issued, 1, memory_order_relaxed) + 1;
}

void rg_derivation_hold(bool on)
{
    if (on && epoch_held++ == 0) epoch = atomic_fetch_add_explicit(&epochs_issued, 1, memory_order_relaxed) + 1;
    if (!on) {
        RG_ASSERT(epoch_held > 0, "rg_derivation_hold(false) without a matching rg_derivation_hold(true)");
        epoch_held--;
    }
}

bool rg_derived_current(const rg_tensor *t, const rg_derived *d)
{
    if (epoch == 0) rg_derivation_begin(); /* a thread's first product: an epoch of its own */
    return d->p && d->of == t->data && d->version == t->version && d->epoch == epoch;
}

/* The calling thread's epoch, for a copy being made (after rg_derived_current found it stale). */
uint64_t rg_derivation_epoch(void) { return epoch; }

void rg_ctx_reset(rg_ctx *c)
{
    rg_arena_reset(&c->arena);
    c->tape_len = 0;
    c->generation++;
    rg_derivation_begin();
}

bool rg_set_grad_enabled(rg_ctx *c, bool enabled)
{
    bool old = c->grad_enabled;
    c->grad_enabled = enabled;
    return old;
}

/* ---------------------------------------------------------------- tensors */

static void set_shape(rg_tensor *t, int ndim, const int *shape)
{
    RG_ASSERT(ndim >= 0 && ndim <= RG_MAX_DIMS, "tensor: ndim %d outside 0..%d", ndim, RG_MAX_DIMS);
    t->ndim = ndim;
    int64_t n = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        RG_ASSERT(shape[i] >= 1, "tensor: dimension %d has size %d (must be >= 1)", i, shape[i]);
        t->shape[i] = shape[i];
        t->stride[i] = (int)n;
        n *= shape[i];
    }
    for (int i = ndim; i < RG_MAX_DIMS; i++) { t->shape[i] = 1; t->stride[i] = 1; }
    t->numel = n;
}

/* A tensor header on the arena; data is `data`, or fresh arena memory when NULL. */
static rg_tensor *tensor_on(rg_ctx *c, int ndim, const int *shape, rg_real *data)
{
    rg_tensor *t = rg_arena_calloc(&c->arena, sizeof *t);
    set_shape(t, ndim, shape);
    t->data = data ? data : rg_arena_alloc(&c->arena, (size_t)t->numel * sizeof(rg_real));
    t->ctx = c;
    t->generation = c->generation;
    return t;
}

rg_tensor *rg_tensor_new(rg_ctx *c, int ndim, const int *shape) { return tensor_on(c, ndim, shape, NULL); }

rg_tensor *rg_tensor_zeros(rg_ctx *c, int ndim, const int *shape)
{
    rg_tensor *t = rg_tensor_new(c, ndim, shape);
    memset(t->data, 0, (size_t)t->numel * sizeof(rg_real));
    return t;
}

rg_tensor *rg_tensor_from(rg_ctx *c, int ndim, const int *shape, const rg_real *data)
{
    rg_tensor *t = rg_tensor_new(c, ndim, shape);
    memcpy(t->data, data, (size_t)t->numel * sizeof(rg_real));
    return t;
}

rg_tensor *rg_tensor_1d(rg_ctx *c, int d0) { return rg_tensor_new(c, 1, (int[]){d0}); }
rg_tensor *rg_tensor_2d(rg_ctx *c, int d0, int d1) { return rg_tensor_new(c, 2, (int[]){d0, d1}); }
rg_tensor *rg_tensor_3d(rg_ctx *c, int d0, int d1, int d2) { return rg_tensor_new(c, 3, (int[]){d0, d1, d2}); }

rg_tensor *rg_param_new(const char *name, int ndim, const int *shape)
{
    if (ndim < 1 || ndim > RG_MAX_DIMS) {
        rg_error(RG_ERR_SHAPE, "parameter %s: ndim %d outside 1..%d", name, ndim, RG_MAX_DIMS);
        return NULL;
    }
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 1) {
            rg_error(RG_ERR_SHAPE, "parameter %s: dimension %d has size %d", name, i, shape[i]);
            return NULL;
        }
    rg_tensor *t = calloc(1, sizeof *t);
    if (!t) { rg_error(RG_ERR_NOMEM, "parameter %s: out of memory", name); return NULL; }
    set_shape(t, ndim, shape);
    t->data = calloc((size_t)t->numel, sizeof(rg_real));
    t->grad = calloc((size_t)t->numel + 1, sizeof(rg_real)); /* + the guard element checked by rg_backward */
    if (!t->data || !t->grad) {
        free(t->data); free(t->grad); free(t);
        rg_error(RG_ERR_NOMEM, "parameter %s: out of memory", name);
        return NULL;
    }
    t->grad[t->numel] = (rg_real)NAN;
    rg_tensor_set_name(t, name);
    t->requires_grad = true;
    t->is_param = true;
    return t;
}

void rg_param_free(rg_tensor *p)
{
    if (!p) return;
    RG_ASSERT(p->is_param, "rg_param_free: %s is not a parameter", p->name);
    free(p->data);
    free(p->grad);
    free(p->bf16.p);
    free(p->transposed.p);
    free(p);
}

void rg_tensor_set_name(rg_tensor *t, const char *name)
{
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
}

char *rg_shape_str(const rg_tensor *t, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < t->ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %d" : "%d", t->shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

bool rg_same_shape(const rg_tensor *a, const rg_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

rg_tensor *rg_node_new(rg_ctx *c, const rg_op *op, int ndim, const int *shape, int nsrc, rg_tensor *const *srcs)
{
    return rg_node_new_view(c, op, ndim, shape, nsrc, srcs, NULL);
}

rg_tensor *rg_node_new_view(rg_ctx *c, const rg_op *op, int ndim, const int *shape, int nsrc, rg_tensor *const *srcs,
                            rg_real *data)
{
    RG_ASSERT(nsrc <= RG_MAX_SRC, "%s: %d sources (at most %d)", op->name, nsrc, RG_MAX_SRC);
    rg_tensor *t = tensor_on(c, ndim, shape, data);
    bool needs = false;
    for (int i = 0; i < nsrc; i++)
        if (srcs[i] && srcs[i]->requires_grad) needs = true;
    if (!c->grad_enabled || !needs) return t;
    t->op = op;
    t->requires_grad = true;
    t->nsrc = nsrc;
    for (int i = 0; i < nsrc; i++) {
        t->src[i] = srcs[i];
        t->src_version[i] = srcs[i] ? srcs[i]->version : 0;
    }
    if (c->tape_len == c->tape_cap) {
        int cap = c->tape_cap ? 2 * c->tape_cap : 256;
        rg_tensor **tape = realloc(c->tape, (size_t)cap * sizeof *tape);
        if (!tape) rg_oom("out of memory growing the tape to %d nodes", cap);
        c->tape = tape;
        c->tape_cap = cap;
    }
    c->tape[c->tape_len++] = t;
    return t;
}

rg_real *rg_grad_of(rg_tensor *t)
{
    if (!t->grad) {
        RG_ASSERT(t->ctx, "gradient of %s: the tensor has no context and no gradient buffer", t->name);
        t->grad = rg_arena_calloc(&t->ctx->arena, ((size_t)t->numel + 1) * sizeof(rg_real));
        t->grad[t->numel] = (rg_real)NAN; /* guard element checked by rg_backward */
    }
    return t->grad;
}

rg_real *rg_grad_fresh(rg_tensor *t, bool *fresh)
{
    *fresh = !t->grad;
    if (!t->grad) {
        RG_ASSERT(t->ctx, "gradient of %s: the tensor has no context and no gradient buffer", t->name);
        t->grad = rg_arena_alloc(&t->ctx->arena, ((size_t)t->numel + 1) * sizeof(rg_real));
        t->grad[t->numel] = (rg_real)NAN; /* guard element checked by rg_backward */
    }
    return t->grad;
}

