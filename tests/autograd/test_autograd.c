/* test_autograd.c: the backward engine (float32 build): gradients of reused intermediates, accumulation across
 * backward calls, no-grad mode, no heap allocation in a steady-state training step, and the misuse checks that
 * abort with a message (each run in a forked child whose stderr is captured).
 *
 * Expected gradients are derived by hand in the comments. */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------ heap counter */

/* malloc and friends are interposed for the whole process (this executable's definitions take precedence over
 * libc's for every library, OpenBLAS and HDF5 included) and forwarded to glibc's allocator; while `counting` is
 * set every call is counted. Under AddressSanitizer (make sanitize), which owns malloc, there is no interposition
 * and the heap counts are skipped (the arena and tape checks still run). */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_HOOK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_HOOK 0
#endif
#endif
#ifndef HEAP_HOOK
#define HEAP_HOOK 1
#endif

static volatile int counting;
static long heap_allocs, heap_frees;

#if HEAP_HOOK
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static inline void count_alloc(void) { if (counting) __atomic_add_fetch(&heap_allocs, 1, __ATOMIC_RELAXED); }

void *malloc(size_t n) { count_alloc(); return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { count_alloc(); return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { count_alloc(); return __libc_realloc(p, n); }
void *aligned_alloc(size_t al, size_t n) { count_alloc(); return __libc_memalign(al, n); }
void *memalign(size_t al, size_t n);
void *memalign(size_t al, size_t n) { count_alloc(); return __libc_memalign(al, n); }
int posix_memalign(void **out, size_t al, size_t n)
{
    count_alloc();
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void *p)
{
    if (p && counting) __atomic_add_fetch(&heap_frees, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}
#endif

static void count_start(void) { heap_allocs = heap_frees = 0; counting = 1; }
static void count_stop(void) { counting = 0; }

/* ------------------------------------------------------------------------------------------------ helpers */

static rg_tensor *param_from(const char *name, int ndim, const int *shape, const double *v)
{
    rg_tensor *p = rg_param_new(name, ndim, shape);
    assert_non_null(p);
    for (int64_t i = 0; i < p->numel; i++) p->data[i] = (rg_real)v[i];
    return p;
}

static int setup_ctx(void **state) { *state = rg_ctx_new(); return 0; }
static int teardown_ctx(void **state) { rg_ctx_free(*state); return 0; }

/* ------------------------------------------------------------------------------------------------ graph tests */

/* a = [1, 2, -1], b = [3, -0.5, 2]; y = a*b = [3, -1, -2]; z = y*y + y; loss = sum(z) = 12 + 0 + 2 = 14.
 * dloss/dy = 2y + 1 = [7, -1, -3] (y reaches z on three paths: both factors of y*y and the + y);
 * da = (2y+1) b = [21, 0.5, -6], db = (2y+1) a = [7, -2, 3]. */
static void build_reuse(rg_ctx *c, rg_tensor *a, rg_tensor *b, rg_tensor **loss)
{
    rg_tensor *y = rg_mul(c, a, b);
    rg_tensor *z = rg_add(c, rg_mul(c, y, y), y);
    *loss = rg_sum(c, z);
}

static void test_reused_intermediate(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *a = param_from("a", 1, (int[]){3}, (double[]){1, 2, -1});
    rg_tensor *b = param_from("b", 1, (int[]){3}, (double[]){3, -0.5, 2});
    rg_tensor *loss;
    build_reuse(c, a, b, &loss);
    tc_assert_close("loss", loss->data, (double[]){14}, 1, 0, 0);
    rg_backward(c, loss, NULL);
    tc_assert_close("da", a->grad, (double[]){21, 0.5, -6}, 3, 0, 0);
    tc_assert_close("db", b->grad, (double[]){7, -2, 3}, 3, 0, 0);
    rg_param_free(a);
    rg_param_free(b);
}

/* The same parameter as both operands: d(sum(p*p))/dp = 2p; through a broadcast too: q [2,3] * p [3] summed:
 * dp_j = sum_i q_ij, dq_ij = p_j. */
static void test_same_tensor_twice(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *p = param_from("p", 1, (int[]){3}, (double[]){1.5, -2, 0.25});
    rg_tensor *q = param_from("q", 2, (int[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    rg_backward(c, rg_sum(c, rg_mul(c, p, p)), NULL);
    tc_assert_close("d sum(p*p)", p->grad, (double[]){3, -4, 0.5}, 3, 0, 0);
    rg_zero_grad(p);
    rg_backward(c, rg_sum(c, rg_mul(c, q, p)), NULL);
    tc_assert_close("dp", p->grad, (double[]){5, 7, 9}, 3, 0, 0);
    tc_assert_close("dq", q->grad, (double[]){1.5, -2, 0.25, 1.5, -2, 0.25}, 6, 0, 0);
    rg_param_free(p);
    rg_param_free(q);
}

/* Backward twice without zeroing: parameter gradients double (the intermediates are re-zeroed, so the second
 * call adds exactly the same amount); rg_zero_grad clears; a third backward gives the single gradient again. */
static void test_backward_accumulates(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *a = param_from("a", 1, (int[]){3}, (double[]){1, 2, -1});
    rg_tensor *b = param_from("b", 1, (int[]){3}, (double[]){3, -0.5, 2});
    rg_tensor *loss;
    build_reuse(c, a, b, &loss);
    rg_backward(c, loss, NULL);
    rg_backward(c, loss, NULL);
    tc_assert_close("da twice", a->grad, (double[]){42, 1, -12}, 3, 0, 0);
    tc_assert_close("db twice", b->grad, (double[]){14, -4, 6}, 3, 0, 0);
    rg_zero_grad(a);
    rg_zero_grad(b);
    for (int i = 0; i < 3; i++) assert_true(a->grad[i] == 0 && b->grad[i] == 0);
    rg_backward(c, loss, NULL);
    tc_assert_close("da again", a->grad, (double[]){21, 0.5, -6}, 3, 0, 0);
    rg_param_free(a);
    rg_param_free(b);
}

/* A non-scalar loss with a seed: d(seed . (a*b))/da = seed * b. Backward from a node in the middle of the tape
 * ignores the nodes recorded after it; a branch not on the path to the loss leaves its parameter untouched. */
static void test_seed_and_partial_tape(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *a = param_from("a", 1, (int[]){3}, (double[]){1, 2, -1});
    rg_tensor *b = param_from("b", 1, (int[]){3}, (double[]){3, -0.5, 2});
    rg_tensor *other = param_from("other", 1, (int[]){3}, (double[]){1, 1, 1});
    rg_tensor *y = rg_mul(c, a, b);
    rg_tensor *later = rg_sum(c, rg_mul(c, y, other)); /* recorded after y, not on y's path */
    (void)later;
    rg_backward(c, y, (rg_real[]){1, -1, 0.5});
    tc_assert_close("da", a->grad, (double[]){3, 0.5, 1}, 3, 0, 0);
    tc_assert_close("db", b->grad, (double[]){1, -2, -0.5}, 3, 0, 0);
    for (int i = 0; i < 3; i++) assert_true(other->grad[i] == 0);
    rg_param_free(a);
    rg_param_free(b);
    rg_param_free(other);
}

/* Rows that are entirely -inf (fully masked): softmax gives zeros and log_softmax -inf, and neither passes any
 * gradient to that row, whatever the upstream gradient; the other row gets the usual one: for softmax of [0, 0]
 * with upstream g = [1, 3], y = [0.5, 0.5] and dx = y (g - g.y) = [-0.5, 0.5]; for log_softmax with upstream
 * [1, 3], dx = g - softmax * sum(g) = [1 - 2, 3 - 2] = [-1, 1]. */
static void test_fully_masked_rows_pass_no_gradient(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *p = rg_param_new("p", 2, (int[]){2, 2});
    p->data[0] = p->data[1] = -INFINITY;
    p->data[2] = p->data[3] = 0;
    rg_real seed[4] = {5, -7, 1, 3};
    rg_backward(c, rg_softmax(c, p), seed);
    tc_assert_close("softmax dx", p->grad, (double[]){0, 0, -0.5, 0.5}, 4, 1e-7, 0);
    rg_zero_grad(p);
    rg_backward(c, rg_log_softmax(c, p), seed);
    tc_assert_close("log_softmax dx", p->grad, (double[]){0, 0, -1, 1}, 4, 1e-7, 0);
    rg_param_free(p);
}

static void test_no_grad(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *w = param_from("w", 2, (int[]){2, 2}, (double[]){1, 2, 3, 4});
    rg_tensor *x = rg_tensor_from(c, 2, (int[]){1, 2}, (rg_real[]){1, 1});
    assert_true(rg_set_grad_enabled(c, false)); /* returns the previous setting (enabled) */
    rg_tensor *y = rg_sum(c, rg_gelu(c, rg_linear(c, x, w, NULL)));
    assert_int_equal(c->tape_len, 0);
    assert_false(y->requires_grad);
    assert_null(y->op);
    /* the values are still computed: linear gives [3, 7]; numpy 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))) summed
     * over x = [3, 7] is 9.996362607918224 */
    tc_assert_close("no-grad value", y->data, (double[]){9.996362607918224}, 1, 1e-5, 0);
    assert_false(rg_set_grad_enabled(c, true));
    y = rg_linear(c, x, w, NULL);
    assert_int_equal(c->tape_len, 1);
    assert_true(y->requires_grad);
    /* inputs that require no grad record nothing either */
    rg_tensor *z = rg_add(c, x, x);
    assert_int_equal(c->tape_len, 1);
    assert_false(z->requires_grad);
    rg_param_free(w);
}

/* ------------------------------------------------------------------------------------------------ no allocation */

/* The heap counter sees real calls: a parameter (calloc) and an arena block (posix_memalign). */
static void test_heap_counter_works(void **state)
{
    if (!HEAP_HOOK) skip();
    count_start();
    rg_tensor *p = rg_param_new("p", 1, (int[]){10});
    rg_arena a = {0};
    rg_arena_alloc(&a, 100);
    count_stop();
    assert_true(heap_allocs >= 4); /* header + data + grad, the arena block and its header */
    count_start();
    rg_param_free(p);
    rg_arena_free(&a);
    count_stop();
    assert_true(heap_frees >= 5);
}

enum { MLP_B = 8, MLP_T = 32, MLP_IN = 64, MLP_HID = 256, MLP_V = 10, MLP_STEPS = 10 };

/* Ten training steps of a 2-layer MLP: linear -> gelu -> layernorm -> linear -> cross_entropy (some targets
 * ignored), SGD updates, with OpenBLAS on `threads` threads. Counts the heap calls of steps 3..10 into *allocs and
 * *frees and checks that the arena made no new block and the tape kept its buffer. The activations (8*32*256
 * floats = 256 kB each) exceed the arena's first 1 MiB block, so step 1 chains blocks and the reset merges them. */
static void mlp_steps(rg_ctx *c, int threads, long *allocs, long *frees)
{
    rg_set_num_threads(threads);
    rg_rng r;
    rg_rng_seed(&r, 11, 0);
    rg_tensor *w1 = tc_param_randn("w1", 2, (int[]){MLP_HID, MLP_IN}, &r, 0.1);
    rg_tensor *b1 = tc_param_randn("b1", 1, (int[]){MLP_HID}, &r, 0.1);
    rg_tensor *lw = tc_param_randn("ln.w", 1, (int[]){MLP_HID}, &r, 0.1);
    rg_tensor *lb = tc_param_randn("ln.b", 1, (int[]){MLP_HID}, &r, 0.1);
    rg_tensor *w2 = tc_param_randn("w2", 2, (int[]){MLP_V, MLP_HID}, &r, 0.1);
    rg_tensor *b2 = tc_param_randn("b2", 1, (int[]){MLP_V}, &r, 0.1);
    rg_tensor *ps[] = {w1, b1, lw, lb, w2, b2};
    for (int j = 0; j < MLP_HID; j++) lw->data[j] += 1;
    rg_real *xdata = malloc(sizeof(rg_real) * MLP_B * MLP_T * MLP_IN);
    int32_t *tg = malloc(sizeof(int32_t) * MLP_B * MLP_T);
    for (int i = 0; i < MLP_B * MLP_T * MLP_IN; i++) xdata[i] = (rg_real)rg_rng_normal(&r);
    for (int i = 0; i < MLP_B * MLP_T; i++) tg[i] = i % 5 == 4 ? -100 : (int32_t)rg_rng_below(&r, MLP_V);
    double first_loss = 0, last_loss = 0;
    size_t arena_mallocs = 0;
    int tape_cap = 0;
    rg_tensor **tape_ptr = NULL;
    for (int step = 1; step <= MLP_STEPS; step++) {
        if (step == 3) {
            arena_mallocs = c->arena.n_mallocs;
            tape_cap = c->tape_cap;
            tape_ptr = c->tape;
            count_start();
        }
        rg_ctx_reset(c);
        rg_tensor *x = rg_tensor_from(c, 3, (int[]){MLP_B, MLP_T, MLP_IN}, xdata);
        rg_tensor *h = rg_gelu(c, rg_linear(c, x, w1, b1));
        h = rg_layernorm(c, h, lw, lb, 1e-5);
        rg_tensor *loss = rg_cross_entropy(c, rg_linear(c, h, w2, b2), tg, -100);
        for (int k = 0; k < 6; k++) rg_zero_grad(ps[k]);
        rg_backward(c, loss, NULL);
        for (int k = 0; k < 6; k++) {
            for (int64_t i = 0; i < ps[k]->numel; i++) ps[k]->data[i] -= (rg_real)0.1 * ps[k]->grad[i];
            rg_tensor_bump_version(ps[k]);
        }
        if (step == 1) first_loss = loss->data[0];
        last_loss = loss->data[0];
    }
    count_stop();
    *allocs = heap_allocs;
    *frees = heap_frees;
    assert_int_equal(c->arena.n_mallocs, arena_mallocs);
    assert_int_equal(c->tape_cap, tape_cap);
    assert_ptr_equal(c->tape, tape_ptr);
    assert_true(c->arena.high_water > ((size_t)1 << 20)); /* the step really outgrew the first block */
    assert_true(last_loss < first_loss);                 /* and the steps trained something */
    free(xdata);
    free(tg);
    for (int k = 0; k < 6; k++) rg_param_free(ps[k]);
}

/* Steps 3..10 make no heap call at all with one BLAS thread. With several, OpenBLAS's threaded GEMM driver
 * (sgemm_thread_*, level3_thread.c) mallocs and frees a job buffer on every call: outside ropegrad, reported for
 * information only. */
static void test_steady_state_no_alloc(void **state)
{
    rg_ctx *c = *state;
    long allocs, frees;
    mlp_steps(c, 1, &allocs, &frees);
    if (HEAP_HOOK && (allocs || frees))
        fail_msg("steps 3..%d made %ld heap allocations and %ld frees", MLP_STEPS, allocs, frees);
    rg_ctx_reset(c);
    mlp_steps(c, 2, &allocs, &frees);
    if (HEAP_HOOK)
        print_message("with 2 OpenBLAS threads, steps 3..%d: %ld heap allocations, %ld frees (inside OpenBLAS)\n",
                      MLP_STEPS, allocs, frees);
    rg_set_num_threads(1);
}

/* ------------------------------------------------------------------------------------------------ misuse aborts */

/* Runs fn in a forked child with stderr captured; the child must die by SIGABRT and its stderr must contain
 * "ropegrad: fatal" and every word in `words` (NULL-terminated). */
static void expect_abort(const char *what, void (*fn)(void), const char *const *words)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); /* no core file from the expected abort */
        signal(SIGABRT, SIG_DFL);
        close(fd[0]);
        dup2(fd[1], 2);
        close(fd[1]);
        fn();
        _exit(0); /* did not abort */
    }
    close(fd[1]);
    char buf[4096];
    size_t len = 0;
    ssize_t k;
    while ((k = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)k;
    buf[len] = 0;
    close(fd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("%s: the child did not abort (%s %d); stderr: %s", what,
                 WIFSIGNALED(status) ? "signal" : "exit status", WIFSIGNALED(status) ? WTERMSIG(status)
                                                                                      : WEXITSTATUS(status), buf);
    if (!strstr(buf, "ropegrad: fatal")) fail_msg("%s: no 'ropegrad: fatal' in stderr: %s", what, buf);
    for (int i = 0; words[i]; i++)
        if (!strstr(buf, words[i])) fail_msg("%s: stderr lacks \"%s\": %s", what, words[i], buf);
    print_message("%-34s -> %s", what, buf);
}

static rg_tensor *small_param(const char *name)
{
    return param_from(name, 2, (int[]){2, 3}, (double[]){1, -2, 3, 0.5, 0.25, -1});
}

static void case_non_scalar(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_backward(c, rg_mul(c, p, p), NULL);
}

static void case_after_reset(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_tensor *loss = rg_sum(c, rg_mul(c, p, p));
    rg_ctx_reset(c);
    rg_backward(c, loss, NULL);
}

/* The same after a step big enough to chain arena blocks (a 400000-element product is 1.6 MB > the first 1 MiB
 * block): the reset frees the blocks the loss lived in, so the engine must not read the stale tensor. */
static void case_after_reset_big(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = rg_param_new("p", 1, (int[]){400000});
    rg_tensor *loss = rg_sum(c, rg_mul(c, p, p));
    if (c->arena.n_mallocs < 2) _exit(3); /* the premise: several blocks */
    rg_ctx_reset(c);
    rg_backward(c, loss, NULL);
}

/* exp's backward reads its own result; writing that result in place before anything consumed it must abort too
 * (no consumer recorded the old version). */
static void case_output_modified_in_place(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_tensor *y = rg_exp(c, p);
    y->data[0] = 100;
    rg_tensor_bump_version(y);
    rg_backward(c, rg_sum(c, y), NULL);
}

static void case_modified_in_place(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *w = small_param("w");
    rg_tensor *x = rg_tensor_from(c, 2, (int[]){1, 3}, (rg_real[]){1, 2, 3});
    rg_tensor *loss = rg_sum(c, rg_linear(c, x, w, NULL));
    w->data[0] += 1; /* an optimizer step before backward */
    rg_tensor_bump_version(w);
    rg_backward(c, loss, NULL);
}

static void case_other_context(void)
{
    rg_ctx *c = rg_ctx_new(), *d = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_backward(d, rg_sum(c, p), NULL);
}

static void case_no_grad_loss(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_set_grad_enabled(c, false);
    rg_backward(c, rg_sum(c, p), NULL);
}

static void case_broadcast_mismatch(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_add(c, rg_tensor_2d(c, 2, 3), rg_tensor_1d(c, 4));
}

static void case_matmul_mismatch(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_matmul(c, rg_tensor_2d(c, 2, 3), rg_tensor_2d(c, 4, 5), false, false);
}

static void case_bad_target(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *l = rg_tensor_zeros(c, 2, (int[]){2, 3});
    rg_cross_entropy(c, l, (int32_t[]){1, 3}, -100);
}

static void case_bad_index(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *w = small_param("emb");
    rg_embedding(c, w, (int32_t[]){0, 2}, 1, (int[]){2});
}

static const rg_op OP_NO_BACKWARD = {"no_backward_op", NULL};

static void case_no_backward_rule(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_tensor *y = rg_node_new(c, &OP_NO_BACKWARD, 2, p->shape, 1, &p);
    rg_backward(c, rg_sum(c, y), NULL);
}

/* A rule that writes one element past its input's gradient. */
static void overflowing_backward(rg_tensor *node)
{
    rg_real *g = rg_grad_of(node->src[0]);
    g[node->src[0]->numel] = 0;
}
static const rg_op OP_OVERFLOW = {"overflowing_op", overflowing_backward};

static void case_gradient_overflow(void)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *p = small_param("p");
    rg_tensor *y = rg_node_new(c, &OP_OVERFLOW, 2, p->shape, 1, &p);
    rg_backward(c, rg_sum(c, y), NULL);
}

static void test_misuse_aborts(void **state)
{
    expect_abort("non-scalar loss without a seed", case_non_scalar,
                 (const char *const[]){"not a scalar", "[2, 3]", "seed", NULL});
    expect_abort("backward after rg_ctx_reset", case_after_reset, (const char *const[]){"rg_ctx_reset", NULL});
    expect_abort("backward after reset, chained arena", case_after_reset_big,
                 (const char *const[]){"rg_ctx_reset", NULL});
    expect_abort("saved result modified in place", case_output_modified_in_place,
                 (const char *const[]){"exp", "modified in place", NULL});
    expect_abort("saved tensor modified in place", case_modified_in_place,
                 (const char *const[]){"modified in place", "w", "linear", NULL});
    expect_abort("loss from another context", case_other_context, (const char *const[]){"not made on this context",
                                                                                        NULL});
    expect_abort("loss recorded in no-grad mode", case_no_grad_loss,
                 (const char *const[]){"does not depend on anything that requires grad", NULL});
    expect_abort("op without a backward rule", case_no_backward_rule,
                 (const char *const[]){"no_backward_op", "no backward rule", NULL});
    expect_abort("backward rule writing past a gradient", case_gradient_overflow,
                 (const char *const[]){"overflowing_op", "wrote past the end", NULL});
    expect_abort("shapes that do not broadcast", case_broadcast_mismatch,
                 (const char *const[]){"add", "[2, 3]", "[4]", NULL});
    expect_abort("matmul inner dims", case_matmul_mismatch, (const char *const[]){"matmul", "inner dims", NULL});
    expect_abort("cross-entropy target out of range", case_bad_target,
                 (const char *const[]){"cross_entropy", "target 3", NULL});
    expect_abort("embedding index out of range", case_bad_index, (const char *const[]){"embedding", "index 2", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reused_intermediate, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_same_tensor_twice, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_backward_accumulates, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_seed_and_partial_tape, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_fully_masked_rows_pass_no_gradient, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_no_grad, setup_ctx, teardown_ctx),
        cmocka_unit_test(test_heap_counter_works),
        cmocka_unit_test_setup_teardown(test_steady_state_no_alloc, setup_ctx, teardown_ctx),
        cmocka_unit_test(test_misuse_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
