/* dnnl.c: the one file that calls oneDNN (Debian libdnnl-dev 2.6, its 2.x C API; 3.x changed it), behind gemm.h:
 * bf16 matrix products with float32 accumulation and results (rg_gemm_bf16), float32 products (rg_gemm_dnnl_f32,
 * for the per-shape choice in gemm.c), and the float32 -> bf16 conversion (rg_bf16_from_float, rg_bf16_rows).
 *
 * Shapes as rg_gemm: row-major C [M, N] = op(A) [M, K] op(B) [K, N] + beta C, beta 0 or 1 (1: oneDNN's sum
 * post-op). A transposed operand is described to oneDNN by its strides, never copied here. One matmul primitive per
 * (transposes, M, N, K, strides, beta, data type), created on first use and kept in a per-thread table (2.x has no
 * runtime shapes worth their cost; creating an AMX primitive takes 0.1-1 ms, running a small one ~1 us).
 *
 * Threads: Debian's oneDNN runs on OpenMP (libgomp). Every thread that calls oneDNN first sets its OpenMP thread
 * count to 1 (omp_set_num_threads, which libgomp keeps per thread), so oneDNN never starts an OpenMP team: no
 * spin-waiting threads next to ropegrad's pool and OpenBLAS's. With more threads (rg_set_num_threads), rg_gemm_bf16
 * splits a large product by rows over ropegrad's own pool (pool.h), each part a oneDNN call on one thread.
 *
 * Built with -DRG_HAVE_DNNL (the Makefile sets it when dnnl.h is installed) and loaded at run time (dlopen, below);
 * without it, or in the float64 build, every function here reports bf16 as unavailable and the products abort
 * (callers check rg_bf16_supported). */
#include "dnnl.h"
#include "gemm_profile.h"
#include "pool.h"
#include "fastmath.h"

#include <stdio.h>
#include <string.h>

/* Round to nearest even on the upper 16 bits (what oneDNN and PyTorch do): rows x cols, strided. One kernel for
 * every conversion: rg_bf16_from_float's parts are single rows, the producers' rows and head blocks strided. */
RG_VECTORIZE static void bf16_rows_portable(uint16_t *restrict dst, int64_t ldd, const float *restrict src,
                                            int64_t lds, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) dst[r * ldd + j] = rg_bf16_round(src[r * lds + j]);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#include <immintrin.h>
/* AVX512_BF16's VCVTNEPS2BF16: the same bits as rg_bf16_round, 16 values per instruction, the column tail masked
 * (subnormal inputs become +-0: the instruction implies DAZ, as ropegrad's steps run anyway: tensor.h) */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static void bf16_rows_avx512(uint16_t *restrict dst,
    int64_t ldd, const float *restrict src, int64_t lds, int rows, int cols)
{
    const __mmask16 tail = (__mmask16)((1u << (cols % 16)) - 1);
    for (int r = 0; r < rows; r++) {
        const float *s = src + r * lds;
        uint16_t *d = dst + r * ldd;
        int j = 0;
        for (; j + 16 <= cols; j += 16) {
            __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(s + j));
            memcpy(d + j, &h, 32);
        }
        if (tail) {
            __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(tail, s + j));
            __m256i hi;
            memcpy(&hi, &h, 32);
            _mm256_mask_storeu_epi16(d + j, tail, hi);
        }
    }
}
#define HAVE_BF16_ASM 1
#endif

static void bf16_rows_f32(uint16_t *restrict dst, int64_t ldd, const float *restrict src, int64_t lds, int rows,
                          int cols)
{
#ifdef HAVE_BF16_ASM
    if (__builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl")) { /* libgcc's model: no race */
        bf16_rows_avx512(dst, ldd, src, lds, rows, cols);
        return;
    }
#endif
    bf16_rows_portable(dst, ldd, src, lds, rows, cols);
}

void rg_bf16_rows(uint16_t *restrict dst, int64_t ldd, const rg_real *restrict src, int64_t lds, int rows, int cols)
{
#ifdef RG_DOUBLE /* the float64 build has no bf16 products: nothing calls this there */
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) dst[r * ldd + j] = rg_bf16_round((float)src[r * lds + j]);
#else
    bf16_rows_f32(dst, ldd, src, lds, rows, cols);
#endif
}

typedef struct {
    uint16_t *dst;
    const float *src;
} bf16_pass;

#define ROW_MAX (1 << 30) /* a part converted as rows of at most this many values (the kernel counts in int) */

static void bf16_part(void *p, int64_t i0, int64_t i1)
{
    const bf16_pass *a = p;
    for (int64_t i = i0; i < i1; i += ROW_MAX) {
        const int n = (int)(i1 - i < ROW_MAX ? i1 - i : ROW_MAX);
        bf16_rows_f32(a->dst + i, n, a->src + i, n, 1, n);
    }
}

/* Elementwise, so split over the pool (rg_pool_for) when large with the same bits. */
void rg_bf16_from_float(uint16_t *restrict dst, const float *restrict src, int64_t n)
{
    bf16_pass a = {dst, src};
    rg_pool_for(n, RG_POOL_GRAIN, 16, bf16_part, &a);
}

float rg_bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#if defined(RG_HAVE_DNNL) && !defined(RG_DOUBLE)

#include <dlfcn.h>
#include <dnnl.h>
#include <pthread.h>
#include <stdlib.h>

/* oneDNN is loaded at run time (dlopen of libdnnl.so.2, Debian's libdnnl2): a program links libropegrad.a without
 * -ldnnl (the README's compile line), and a machine without the library runs fp32 and refuses bf16 with the reason. */
#define DNNL_FUNCS(X) X(dnnl_get_effective_cpu_isa) X(dnnl_engine_create) X(dnnl_stream_create) \
    X(dnnl_memory_desc_init_by_strides) X(dnnl_matmul_desc_init) X(dnnl_primitive_attr_create) \
    X(dnnl_post_ops_create) X(dnnl_post_ops_append_sum) X(dnnl_primitive_attr_set_post_ops) \
    X(dnnl_primitive_desc_create) X(dnnl_primitive_create) X(dnnl_memory_create) X(dnnl_primitive_desc_destroy) \
    X(dnnl_primitive_attr_destroy) X(dnnl_post_ops_destroy) X(dnnl_memory_set_data_handle) \
    X(dnnl_primitive_execute) X(dnnl_stream_wait) X(dnnl_version) X(dnnl_primitive_destroy) \
    X(dnnl_memory_destroy) X(dnnl_stream_destroy)
#define DECLARE(f) static __typeof__(f) *p_##f;
DNNL_FUNCS(DECLARE)
static void (*p_omp_set_num_threads)(int); /* libgomp's, which libdnnl.so.2 links: OpenMP is held at 1 thread */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[300];

static void load(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error, "oneDNN could not be loaded (%s; Debian: apt-get install libdnnl2)",
                 dlerror());
        return;
    }
#define LOAD(f) \
    if (!(p_##f = (__typeof__(p_##f))dlsym(h, #f))) { \
        snprintf(load_error, sizeof load_error, "libdnnl.so.2 has no %s (oneDNN 2.x expected)", #f); \
        return; \
    }
    DNNL_FUNCS(LOAD)
    p_omp_set_num_threads = (void (*)(int))dlsym(h, "omp_set_num_threads");
    const dnnl_version_t *v = p_dnnl_version();
    if (v->major != DNNL_VERSION_MAJOR) {
        snprintf(load_error, sizeof load_error, "libdnnl.so.2 is oneDNN %d.%d, built against %d.x", v->major,
                 v->minor, DNNL_VERSION_MAJOR);
        return;
    }
    loaded = true;
}

static bool load_dnnl(void)
{
    pthread_once(&load_once, load);
    return loaded;
}

static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static dnnl_status_t engine_status = dnnl_success;

static void make_engine(void) { engine_status = p_dnnl_engine_create(&engine, dnnl_cpu, 0); }

bool rg_bf16_supported(char *why, size_t n)
{
    if (!load_dnnl()) {
        if (why) snprintf(why, n, "bf16 products need oneDNN: %s; use fp32", load_error);
        return false;
    }
    dnnl_cpu_isa_t isa = p_dnnl_get_effective_cpu_isa();
    /* the ISA values are bit sets: avx512_core_bf16's bits are a subset of avx512_core_amx's */
    if ((isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16) return true;
    if (why) snprintf(why, n, "bf16 products need a CPU with AVX512_BF16 or AMX as oneDNN %d.%d reports it "
                      "(effective ISA 0x%x here); use fp32", DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, (unsigned)isa);
    return false;
}

bool rg_dnnl_available(void) { return load_dnnl(); }

const char *rg_bf16_isa(void)
{
    if (!load_dnnl()) return "none";
    dnnl_cpu_isa_t isa = p_dnnl_get_effective_cpu_isa();
    if ((isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx) return "AMX";
    if ((isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16) return "AVX512_BF16";
    return "none";
}

/* ---------------------------------------------------------------- primitives */

typedef struct {
    bool used, ta, tb;
    int M, N, K, lda, ldb, ldc, beta, bias; /* beta 0 or 1 (the sum post-op); bias: a float32 row [N] added */
    int nb1, nb2;                           /* batch dims (rg_gemm_bf16_batch), 0 for one product */
    int64_t sa1, sa2, sb1, sb2, sc1, sc2;   /* and the operands' strides along them */
    dnnl_data_type_t type;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c, bm;
} entry;

#define TABLE 8192 /* per thread: train_order's step uses ~400 Linear shapes (micro-batch rows vary) and attention
                    * in bf16 about 12 per sequence length (blocks and tiles) */
/* A thread's primitives, memories and stream, released when the thread exits (a pool resized by
 * rg_set_num_threads ends its workers; the main thread's stay until the process ends). */
typedef struct {
    entry *table; /* TABLE entries, open addressing */
    dnnl_stream_t stream;
} thread_cache;
static _Thread_local thread_cache *cache;
static pthread_key_t cache_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_status;

static void release_cache(void *p)
{
    thread_cache *tc = p;
    for (int i = 0; i < TABLE; i++) {
        entry *e = &tc->table[i];
        if (!e->used) continue;
        p_dnnl_primitive_destroy(e->prim);
        p_dnnl_memory_destroy(e->a), p_dnnl_memory_destroy(e->b), p_dnnl_memory_destroy(e->c);
        if (e->bm) p_dnnl_memory_destroy(e->bm);
    }
    p_dnnl_stream_destroy(tc->stream);
    free(tc->table);
    free(tc);
}

static void make_key(void) { key_status = pthread_key_create(&cache_key, release_cache); }

#define CHECK(call) do { dnnl_status_t s_ = (call); \
    RG_ASSERT(s_ == dnnl_success, "oneDNN: %s failed (status %d)", #call, (int)s_); } while (0)

static void thread_setup(void)
{
    RG_ASSERT(load_dnnl(), "%s", load_error);
    pthread_once(&engine_once, make_engine);
    RG_ASSERT(engine_status == dnnl_success, "oneDNN: no CPU engine (status %d)", (int)engine_status);
    pthread_once(&key_once, make_key);
    RG_ASSERT(key_status == 0, "oneDNN: no thread key for the primitive tables (%s)", strerror(key_status));
    if (p_omp_set_num_threads) p_omp_set_num_threads(1);
    thread_cache *tc = malloc(sizeof *tc);
    entry *table = calloc(TABLE, sizeof *table);
    RG_ASSERT(tc && table, "oneDNN: out of memory for the primitive table");
    *tc = (thread_cache){table, NULL};
    CHECK(p_dnnl_stream_create(&tc->stream, engine, dnnl_stream_default_flags));
    RG_ASSERT(pthread_setspecific(cache_key, tc) == 0, "oneDNN: cannot register the thread's primitive table");
    cache = tc;
}

/* rows x cols matrix, transposed or not, as stored with row stride ld */
static void desc(dnnl_memory_desc_t *md, bool trans, int rows, int cols, int ld, dnnl_data_type_t t)
{
    dnnl_dims_t dims = {rows, cols};
    dnnl_dims_t strides = {trans ? 1 : ld, trans ? ld : 1};
    CHECK(p_dnnl_memory_desc_init_by_strides(md, 2, dims, t, strides));
}

/* the same with two batch dims in front, strides s1 and s2 */
static void desc4(dnnl_memory_desc_t *md, bool trans, int rows, int cols, int ld, int nb1, int nb2, int64_t s1,
                  int64_t s2, dnnl_data_type_t t)
{
    dnnl_dims_t dims = {nb1, nb2, rows, cols};
    dnnl_dims_t strides = {s1, s2, trans ? 1 : ld, trans ? ld : 1};
    CHECK(p_dnnl_memory_desc_init_by_strides(md, 4, dims, t, strides));
}

static void create(entry *e)
{
    dnnl_memory_desc_t a, b, c, bm;
    if (e->nb1) {
        desc4(&a, e->ta, e->M, e->K, e->lda, e->nb1, e->nb2, e->sa1, e->sa2, e->type);
        desc4(&b, e->tb, e->K, e->N, e->ldb, e->nb1, e->nb2, e->sb1, e->sb2, e->type);
        desc4(&c, false, e->M, e->N, e->ldc, e->nb1, e->nb2, e->sc1, e->sc2, dnnl_f32);
    } else {
        desc(&a, e->ta, e->M, e->K, e->lda, e->type);
        desc(&b, e->tb, e->K, e->N, e->ldb, e->type);
        desc(&c, false, e->M, e->N, e->ldc, dnnl_f32);
    }
    if (e->bias) desc(&bm, false, 1, e->N, e->N, dnnl_f32); /* [1, N], broadcast over the rows */
    dnnl_matmul_desc_t md;
    CHECK(p_dnnl_matmul_desc_init(&md, &a, &b, e->bias ? &bm : NULL, &c));
    dnnl_primitive_attr_t attr;
    CHECK(p_dnnl_primitive_attr_create(&attr));
    dnnl_post_ops_t po = NULL;
    if (e->beta) {
        CHECK(p_dnnl_post_ops_create(&po));
        CHECK(p_dnnl_post_ops_append_sum(po, 1.0f));
        CHECK(p_dnnl_primitive_attr_set_post_ops(attr, po));
    }
    dnnl_primitive_desc_t pd;
    CHECK(p_dnnl_primitive_desc_create(&pd, &md, attr, engine, NULL));
    CHECK(p_dnnl_primitive_create(&e->prim, pd));
    CHECK(p_dnnl_memory_create(&e->a, &a, engine, DNNL_MEMORY_NONE));
    CHECK(p_dnnl_memory_create(&e->b, &b, engine, DNNL_MEMORY_NONE));
    CHECK(p_dnnl_memory_create(&e->c, &c, engine, DNNL_MEMORY_NONE));
    e->bm = NULL;
    if (e->bias) CHECK(p_dnnl_memory_create(&e->bm, &bm, engine, DNNL_MEMORY_NONE));
    CHECK(p_dnnl_primitive_desc_destroy(pd));
    CHECK(p_dnnl_primitive_attr_destroy(attr));
    if (po) CHECK(p_dnnl_post_ops_destroy(po));
    e->used = true;
}

static entry *lookup(const entry *key)
{
    if (!cache) thread_setup();
    uint64_t h = 1469598103934665603ull;
    const int v[] = {key->ta,  key->tb,  key->M,    key->N,    key->K,        key->lda,      key->ldb,
                     key->ldc, key->beta, key->bias, key->type, key->nb1,     key->nb2,      (int)key->sa1,
                     (int)key->sa2, (int)key->sb1, (int)key->sb2, (int)key->sc1, (int)key->sc2};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) h = (h ^ (uint32_t)v[i]) * 1099511628211ull;
    for (int probe = 0; probe < TABLE; probe++) {
        entry *e = &cache->table[(h + (uint64_t)probe) % TABLE];
        if (!e->used) {
            entry k = *key;
            create(&k);
            *e = k;
            return e;
        }
        if (e->ta == key->ta && e->tb == key->tb && e->M == key->M && e->N == key->N && e->K == key->K &&
            e->lda == key->lda && e->ldb == key->ldb && e->ldc == key->ldc && e->beta == key->beta &&
            e->bias == key->bias && e->type == key->type && e->nb1 == key->nb1 && e->nb2 == key->nb2 &&
            e->sa1 == key->sa1 && e->sa2 == key->sa2 && e->sb1 == key->sb1 && e->sb2 == key->sb2 &&
            e->sc1 == key->sc1 && e->sc2 == key->sc2)
            return e;
    }
    RG_FATAL("oneDNN: more than %d product shapes on one thread", TABLE);
}

/* One product (or rows of one): C [M, N] = op(A) op(B) (+ bias row) (+ C when beta is 1). */
typedef struct {
    dnnl_data_type_t type;
    bool ta, tb;
    int M, N, K, lda, ldb, ldc, esize;
    float beta;
    const char *A;
    const void *B;
    const float *bias; /* [N] or NULL */
    float *C;
} job;

/* rows [m0, m1) of j's product on the calling thread, with its primitive */
static void run_rows(const job *j, int m0, int m1)
{
    entry key = {.ta = j->ta, .tb = j->tb, .M = m1 - m0, .N = j->N, .K = j->K, .lda = j->lda, .ldb = j->ldb,
                 .ldc = j->ldc, .beta = j->beta != 0, .bias = j->bias != NULL, .type = j->type};
    entry *e = lookup(&key);
    const char *a = j->A + (j->ta ? (int64_t)m0 : (int64_t)m0 * j->lda) * j->esize;
    CHECK(p_dnnl_memory_set_data_handle(e->a, (void *)a));
    CHECK(p_dnnl_memory_set_data_handle(e->b, (void *)j->B));
    CHECK(p_dnnl_memory_set_data_handle(e->c, j->C + (int64_t)m0 * j->ldc));
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, e->a}, {DNNL_ARG_WEIGHTS, e->b}, {DNNL_ARG_DST, e->c}};
    int nargs = 3;
    if (j->bias) {
        CHECK(p_dnnl_memory_set_data_handle(e->bm, (void *)j->bias));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bm};
    }
    CHECK(p_dnnl_primitive_execute(e->prim, cache->stream, nargs, args));
    CHECK(p_dnnl_stream_wait(cache->stream));
}

/* rows [M part / nparts, M (part + 1) / nparts) of one product */
static void part_fn(void *p, int part, int nparts)
{
    const job *j = p;
    int m0 = (int)((int64_t)j->M * part / nparts), m1 = (int)((int64_t)j->M * (part + 1) / nparts);
    if (m1 > m0) run_rows(j, m0, m1);
}

#define PAR_FLOPS 8e6 /* split over the pool from this size on (a bf16 product runs ~4x faster than float32) */

static void product(const job *j)
{
    RG_ASSERT(j->beta == 0 || j->beta == 1, "oneDNN product: beta %g (must be 0 or 1)", (double)j->beta);
    double t0 = rg_gemm_profile_enter();
    int nt = rg_pool_threads();
    if (nt > 1 && 2.0 * j->M * j->N * j->K >= PAR_FLOPS && j->M >= 32 * nt)
        rg_pool_run(part_fn, (void *)j, nt);
    else
        run_rows(j, 0, j->M);
    rg_gemm_profile_leave(t0);
}

void rg_gemm_bf16(bool ta, bool tb, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *B, int ldb,
                  float beta, float *C, int ldc)
{
    product(&(job){dnnl_bf16, ta, tb, M, N, K, lda, ldb, ldc, 2, beta, (const char *)A, B, NULL, C});
}

void rg_gemm_bf16_batch(const rg_bf16_batch *g)
{
    RG_ASSERT(g->beta == 0 || g->beta == 1, "oneDNN product: beta %g (must be 0 or 1)", (double)g->beta);
    if (g->nb1 <= 0 || g->nb2 <= 0 || g->M <= 0 || g->N <= 0 || g->K <= 0) return;
    double t0 = rg_gemm_profile_enter();
    entry key = {.ta = g->ta, .tb = g->tb, .M = g->M, .N = g->N, .K = g->K, .lda = g->lda, .ldb = g->ldb,
                 .ldc = g->ldc, .beta = g->beta != 0, .type = dnnl_bf16, .nb1 = g->nb1, .nb2 = g->nb2,
                 .sa1 = g->sa1, .sa2 = g->sa2, .sb1 = g->sb1, .sb2 = g->sb2, .sc1 = g->sc1, .sc2 = g->sc2};
    entry *e = lookup(&key);
    CHECK(p_dnnl_memory_set_data_handle(e->a, (void *)g->A));
    CHECK(p_dnnl_memory_set_data_handle(e->b, (void *)g->B));
    CHECK(p_dnnl_memory_set_data_handle(e->c, g->C));
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, e->a}, {DNNL_ARG_WEIGHTS, e->b}, {DNNL_ARG_DST, e->c}};
    CHECK(p_dnnl_primitive_execute(e->prim, cache->stream, 3, args));
    CHECK(p_dnnl_stream_wait(cache->stream));
    rg_gemm_profile_leave(t0);
}

void rg_gemm_bf16_bias(bool ta, bool tb, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *B,
                       int ldb, const float *bias, float *C, int ldc)
{
    product(&(job){dnnl_bf16, ta, tb, M, N, K, lda, ldb, ldc, 2, 0, (const char *)A, B, bias, C});
}

void rg_gemm_dnnl_f32(bool ta, bool tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                      float beta, float *C, int ldc)
{
    product(&(job){dnnl_f32, ta, tb, M, N, K, lda, ldb, ldc, 4, beta, (const char *)A, B, NULL, C});
}

#else /* no oneDNN, or the float64 build */

bool rg_bf16_supported(char *why, size_t n)
{
#ifdef RG_DOUBLE
    if (why) snprintf(why, n, "bf16 products are not part of the float64 build (gradient checks)");
#else
    if (why) snprintf(why, n, "bf16 products need oneDNN: this build found no dnnl.h (Debian: apt-get install "
                      "libdnnl-dev, then rebuild); use fp32");
#endif
    return false;
}

bool rg_dnnl_available(void) { return false; }

const char *rg_bf16_isa(void) { return "none"; }

void rg_gemm_bf16(bool ta, bool tb, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *B, int ldb,
                  float beta, float *C, int ldc)
{
    RG_FATAL("rg_gemm_bf16: this build has no oneDNN (check rg_bf16_supported first)");
}

void rg_gemm_bf16_batch(const rg_bf16_batch *g)
{
    RG_FATAL("rg_gemm_bf16_batch: this build has no oneDNN (check rg_bf16_supported first)");
}

void rg_gemm_bf16_bias(bool ta, bool tb, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *B,
                       int ldb, const float *bias, float *C, int ldc)
{
    RG_FATAL("rg_gemm_bf16_bias: this build has no oneDNN (check rg_bf16_supported first)");
}

void rg_gemm_dnnl_f32(bool ta, bool tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                      float beta, float *C, int ldc)
{
    RG_FATAL("rg_gemm_dnnl_f32: this build has no oneDNN (check rg_dnnl_available first)");
}

#endif
