/* tensor.h: the ropegrad tensor, its memory (persistent storage and the per-step arena), errors, and the step
 * context that ops record into.
 *
 * A tensor holds rg_real data (float32; float64 in the gradient-check build, compiled with -DRG_DOUBLE), up to
 * RG_MAX_DIMS dimensions in PyTorch order, always row-major contiguous (views share data, every other op writes a
 * fresh contiguous result). A tensor produced by an op on a context records the op, its sources and what the
 * backward needs (ggml / PyTorch grad_fn style); src/autograd walks those records backwards.
 *
 * Memory: parameters (rg_param_new) are malloc'ed once and live until rg_param_free. Everything an op creates
 * (result tensors, saved buffers, gradients of intermediates) comes from the context's arena, which
 * rg_ctx_reset empties once per step; after the first step the arena keeps one block large enough for a step,
 * so steady-state training performs no heap allocation in ropegrad (tests/autograd/test_autograd.c counts it; with more
 * than one BLAS thread OpenBLAS's threaded GEMM driver mallocs a job buffer per call on its own).
 */
#ifndef RG_TENSOR_H
#define RG_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../version.h"

#ifdef RG_DOUBLE
typedef double rg_real;
#define RG_REAL_NAME "float64"
#else
/* The element type of every tensor. */
typedef float rg_real;
#define RG_REAL_NAME "float32"
#endif

#define RG_MAX_DIMS 4
#define RG_MAX_SRC 4
#define RG_NAME_LEN 64

/* ---------------------------------------------------------------- errors */

/* Status of library functions that touch files or user input. RG_OK is 0; the message of the last failure on
 * this thread is rg_last_error(). */
typedef enum {
    RG_OK = 0,
    RG_ERR_ARG,     /* a bad argument or user input (unknown name, out-of-range value, position past a table) */
    RG_ERR_SHAPE,   /* shapes that do not fit */
    RG_ERR_IO,      /* a file could not be opened, read, written or renamed */
    RG_ERR_FORMAT,  /* a file is not what it should be (foreign, truncated, wrong version, wrong dtype) */
    RG_ERR_NOMEM    /* an allocation failed */
} rg_status;

/* Records a message for the calling thread (printf format) and returns `code`. */
rg_status rg_error(rg_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message of the last error recorded on this thread ("" when none). */
const char *rg_last_error(void);
/* Forgets the calling thread's message (rg_last_error() is "" until the next error): before calling code that may
 * fail without recording one, so that an older message is not reported as its reason. */
void rg_error_clear(void);

/* Invariant violation: prints file:line and the message to stderr and aborts. Never compiled out. */
void rg_fatal(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
#define RG_FATAL(...) rg_fatal(__FILE__, __LINE__, __VA_ARGS__)
#define RG_ASSERT(cond, ...) do { if (!(cond)) rg_fatal(__FILE__, __LINE__, __VA_ARGS__); } while (0)

/* Out of memory inside a computation. The arena, the tape and the parameter pack allocate where no status can be
 * returned (an op returns a tensor); when such an allocation fails, rg_oom reports it. rg_oom_try(fn, arg) runs
 * fn(arg) on the calling thread with an escape armed: an rg_oom inside it returns RG_ERR_NOMEM from rg_oom_try
 * (rg_last_error: "arena: out of memory allocating a block of 268435456 bytes (arena holds 1610612736 bytes)"),
 * without freeing what fn allocated elsewhere; the context's tensors are then invalid (rg_ctx_reset it; the arena
 * itself stays usable: the failed block was never linked). Nested calls nest. Without an armed escape on the
 * thread, rg_oom aborts as RG_FATAL does. rg_train_step and rg_train_grad arm it around each micro-batch. */
rg_status rg_oom_try(rg_status (*fn)(void *arg), void *arg);
void rg_oom(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ---------------------------------------------------------------- arena */

typedef struct rg_arena_block rg_arena_block;

/* A bump allocator freed all at once. Blocks chain when it runs out (pointers stay valid); rg_arena_reset
 * merges them into one block of the total size, so the next step of the same shape allocates nothing. */
typedef struct {
    rg_arena_block *head;   /* the block being filled (newest) */
    size_t used;            /* bytes handed out since the last reset */
    size_t high_water;      /* the most bytes ever handed out between two resets */
    size_t n_mallocs;       /* blocks ever malloc'ed (for the no-allocation test) */
    uint64_t bytes_total;   /* bytes ever handed out (the benchmark's bytes written per step, as a difference) */
} rg_arena;

/* Returns `bytes` of 64-byte-aligned memory. Grows the arena when needed; aborts with the requested size if the
 * system has no memory left. */
void *rg_arena_alloc(rg_arena *a, size_t bytes);
/* Like rg_arena_alloc, zero-filled. */
void *rg_arena_calloc(rg_arena *a, size_t bytes);
void rg_arena_reset(rg_arena *a);
/* True if p points into one of the arena's current blocks (pointer comparison only, p is not read). rg_backward
 * uses it to refuse a tensor whose memory a reset may have freed. */
bool rg_arena_owns(const rg_arena *a, const void *p);
void rg_arena_free(rg_arena *a);

/* ---------------------------------------------------------------- tensor */

/* A copy of a tensor's data in another form (a Linear weight's transpose, a bf16 copy), made by the first product
 * that needs it and reused only while nothing outside the library can have written the data: valid while of == data,
 * version == the tensor's version (the library's in-place writes bump it: AdamW once per step) AND epoch == the
 * calling thread's derivation epoch (rg_derivation_begin). Every rg_ctx_new, rg_ctx_reset and model forward
 * (rg_model_forward*) begins a new epoch, so a plain C store into a parameter's data (p->data[j] = v, which bumps
 * nothing) made between two steps or two forwards is read by the next one, with no call to make. Within one step
 * the backward reads the copies its forward made (in bf16, a weight written between a forward and its own backward
 * is seen by the next forward only; PyTorch refuses that write). Arena memory for intermediates; malloc'ed once for
 * a parameter (freed with it). docs/caches.md lists every cache of the library and what invalidates it. */
typedef struct {
    void *p;
    const void *of;
    unsigned version;
    uint64_t epoch;
} rg_derived;

struct rg_tensor;
/* What an op is: its name and its backward rule. Each op family defines one static descriptor per op; the
 * backward reads node->src, node->saved, node->iarg/farg and node->grad and ACCUMULATES (+=) into the sources'
 * gradients. backward == NULL means the op is not differentiable (rg_backward aborts naming it). */
typedef struct rg_op {
    const char *name;
    void (*backward)(struct rg_tensor *node);
} rg_op;

typedef struct rg_ctx rg_ctx;

typedef struct rg_tensor {
    rg_real *data;
    rg_real *grad;            /* NULL until a backward reaches it (intermediates) or rg_param_new (parameters) */
    int ndim;
    int shape[RG_MAX_DIMS];
    int stride[RG_MAX_DIMS];  /* in elements; always the contiguous strides */
    int64_t numel;
    char name[RG_NAME_LEN];
    bool requires_grad;
    bool is_param;            /* persistent storage (rg_param_new); gradient accumulates across backward calls */
    bool packed;              /* data and grad point into a parameter registry's blocks (rg_params_pack in nn.h):
                               * its gradient guard element is 0 (the block's padding), not NaN */
    unsigned version;         /* bumped by the library's in-place writes (rg_tensor_bump_version); a plain store
                               * into data bumps nothing (rg_derived's epoch covers it) */
    bool output_saved;        /* set by ops whose backward reads this result's own data (exp, tanh, softmax,
                               * log_softmax): rg_backward aborts if the result was written in place since */
    /* graph record, set by ops created on a context with gradients enabled */
    const rg_op *op;          /* NULL for leaves */
    rg_ctx *ctx;
    unsigned generation;      /* ctx->generation when created; a reset invalidates the node */
    int nsrc;
    struct rg_tensor *src[RG_MAX_SRC];
    unsigned src_version[RG_MAX_SRC];
    rg_derived bf16;          /* data rounded to bfloat16 (bf16 products only: rg_set_linear_precision) */
    rg_derived transposed;    /* a Linear weight [out, in] transposed to [in, out] (float32 products on libxsmm) */
    void *saved;              /* op-specific buffer from the arena (LayerNorm mean/rstd, softmax output, ...) */
    void *saved2;
    int64_t iarg[8];
    double farg[4];
} rg_tensor;

/* The step context: the arena for intermediates and the tape of recorded nodes (in creation order, which is a
 * topological order of a define-by-run graph). */
struct rg_ctx {
    rg_arena arena;
    rg_tensor **tape;
    int tape_len, tape_cap;
    bool grad_enabled;
    unsigned generation;
};

/* Creates a context with gradients enabled, sets flush-to-zero and denormals-are-zero on the calling thread
 * (rg_flush_denormals), and begins a new derivation epoch (rg_derivation_begin). Aborts only if the system has no
 * memory. */
rg_ctx *rg_ctx_new(void);
void rg_ctx_free(rg_ctx *c);
/* Empties the arena and the tape (call once per step). Tensors made on the context become invalid. Begins a new
 * derivation epoch (rg_derivation_begin): copies derived from parameters are made again from their present data. */
void rg_ctx_reset(rg_ctx *c);
/* Enables/disables recording (no-grad mode for evaluation and decoding). Returns the previous setting. */
bool rg_set_grad_enabled(rg_ctx *c, bool enabled);

/* A new uninitialized tensor on the context's arena (an input or a buffer). shape has ndim entries (1..4, each
 * >= 1; ndim 0 is a scalar with numel 1). */
rg_tensor *rg_tensor_new(rg_ctx *c, int ndim, const int *shape);
rg_tensor *rg_tensor_zeros(rg_ctx *c, int ndim, const int *shape);
/* A tensor on the arena holding a copy of `data` (numel values). */
rg_tensor *rg_tensor_from(rg_ctx *c, int ndim, const int *shape, const rg_real *data);
/* Shorthands: rg_tensor_new with the shape listed. */
rg_tensor *rg_tensor_1d(rg_ctx *c, int d0);
rg_tensor *rg_tensor_2d(rg_ctx *c, int d0, int d1);
rg_tensor *rg_tensor_3d(rg_ctx *c, int d0, int d1, int d2);

/* A persistent parameter (malloc'ed data and zeroed grad, requires_grad) named `name` (a state_dict name).
 * Data is zero until initialized. Returns NULL with rg_last_error set if the shape is invalid or memory ran out. */
rg_tensor *rg_param_new(const char *name, int ndim, const int *shape);
void rg_param_free(rg_tensor *p);

/* Marks a tensor as written in place (optimizer step, copy into it); a backward that saved it then aborts. Derived
 * copies do not depend on it being called (rg_derived). */
static inline void rg_tensor_bump_version(rg_tensor *t) { t->version++; }

/* Derivation epochs (rg_derived). Begins a new epoch on the calling thread (a number no thread had before), so that
 * every copy made earlier is made again at its next use; does nothing while the thread holds its epoch
 * (rg_derivation_hold). rg_ctx_new, rg_ctx_reset and rg_model_forward* call it; a program calls it only to have a
 * write seen between two products of one step (its own ops on one context with no reset between). */
void rg_derivation_begin(void);
/* rg_derivation_hold(true) begins a new epoch (when not already holding) and keeps it through the rg_ctx_reset and
 * forwards that follow on this thread, until the matching rg_derivation_hold(false) (calls nest). For the library's
 * loops of forwards with no caller code between them (the micro-batches of one training step, the windows of an
 * evaluation, the tokens of rg_generate): each copy is then derived once for the loop, as before epochs existed. */
void rg_derivation_hold(bool on);
/* True if d is a copy of t's present data made in the calling thread's present epoch (see rg_derived). */
bool rg_derived_current(const rg_tensor *t, const rg_derived *d);
/* The calling thread's present epoch (never 0 once rg_derived_current ran on it): what a copy being made records. */
uint64_t rg_derivation_epoch(void);

void rg_tensor_set_name(rg_tensor *t, const char *name);
/* Writes "[2, 3, 4]" into buf (size >= 64). Returns buf. */
char *rg_shape_str(const rg_tensor *t, char *buf, size_t n);
/* True if both have the same ndim and shape. */
bool rg_same_shape(const rg_tensor *a, const rg_tensor *b);

/* Allocates a result tensor of the given shape for an op and, when the context records and any source requires
 * grad, records the node (op, sources, their versions) on the tape. For op implementers. */
rg_tensor *rg_node_new(rg_ctx *c, const rg_op *op, int ndim, const int *shape, int nsrc, rg_tensor *const *srcs);
/* Like rg_node_new, but the result shares `data` (a view: reshape) instead of owning fresh memory. */
rg_tensor *rg_node_new_view(rg_ctx *c, const rg_op *op, int ndim, const int *shape, int nsrc, rg_tensor *const *srcs,
                            rg_real *data);
/* The gradient buffer of t, allocated (zeroed) on first use: from the arena for intermediates. */
rg_real *rg_grad_of(rg_tensor *t);
/* The gradient buffer of t for a backward rule that WRITES every element of it when *fresh comes back true (then
 * the buffer was just allocated, uninitialized: no zero-fill for a value the rule overwrites anyway) and
 * accumulates (+=) otherwise (an earlier rule already wrote it, or it is a parameter's). */
rg_real *rg_grad_fresh(rg_tensor *t, bool *fresh);

/* ---------------------------------------------------------------- denormals */

/* Subnormal floats (|x| < 1.18e-38 in float32) make x86 arithmetic 10-100x slower per operation (measured here:
 * a 256^3 sgemm with one subnormal operand ran 87-358x slower). ropegrad therefore computes with flush-to-zero
 * (FTZ: a subnormal result becomes 0) and denormals-are-zero (DAZ: a subnormal operand reads as 0), the MXCSR
 * bits of the calling thread: rg_ctx_new and rg_train_step set them, so every step of a program (and every GEMM
 * it makes on that thread, OpenBLAS's and libxsmm's) runs that way without a call of its own. On normal data the
 * results are the same bit for bit (tests/nn/test_train_step.c); values below 1.18e-38 (2.2e-308 in float64) become 0.
 * OpenBLAS's worker threads (2+ threads) are started before main with the default MXCSR: the first rg_ctx_new and
 * every rg_set_num_threads restart them from the calling thread so that they inherit FTZ/DAZ (do not call those
 * while another thread of yours is inside a BLAS call). No-op off x86. */

/* Sets (on = true) or clears FTZ and DAZ for the calling thread. Returns whether both were set before. */
bool rg_flush_denormals(bool on);

/* ---------------------------------------------------------------- threads */

/* Sets the threads of a step (n >= 1): OpenBLAS's (large products) and ropegrad's own pool of n - 1 workers next to
 * the calling thread (libxsmm and oneDNN products split by rows, attention by (batch, head) pairs or by heads, and
 * the large elementwise passes: GELU, LayerNorm, RoPE, AdamW, the bias passes, bf16 conversions; src/tensor/pool.h),
 * all with FTZ/DAZ (see denormals). Without a call: OpenBLAS's default (the OPENBLAS_NUM_THREADS environment
 * variable, else every CPU) and no pool workers. Call it from one thread, while no step runs. The elementwise passes
 * give the bits of one thread at any n; a split product may not (docs/precision.md, "Threads"). */
void rg_set_num_threads(int n);

/* ---------------------------------------------------------------- precision */

/* The operand precision of the model's matrix products: Linear's (rg_linear, rg_linear_gelu, rg_linear_residual: the
 * forward x W^T, the input gradient dy W and the weight gradient dy^T x) and attention's (rg_attention: Q K^T, P V
 * and their gradients dV, dP, dQ, dK). RG_PRECISION_FP32 (the default, the reference): float32 throughout.
 * RG_PRECISION_BF16, mixed precision as torch.autocast(dtype=torch.bfloat16) runs linear, matmul and bmm: the
 * operands are rounded to bfloat16 (round to nearest even; weights once per training step or forward, see
 * rg_derived; each activation and each output gradient once) and multiplied with float32 accumulation and float32
 * results on oneDNN's matmul (src/tensor/dnnl.c; AMX or AVX512_BF16). Everything else stays float32: the master
 * weights, their gradients and AdamW, LayerNorm, softmax and its gradient, the losses and the position encodings
 * (RoPE's rotation and tables, the biases). A process-wide setting; set it before a step, not during one. */
typedef enum { RG_PRECISION_FP32 = 0, RG_PRECISION_BF16 = 1 } rg_precision;

/* Sets the precision of the matrix products (above) for the process. RG_OK, or RG_ERR_ARG (setting unchanged) when p is
 * RG_PRECISION_BF16 and this build or CPU cannot run bf16 products: no oneDNN at build time, the float64 build, or
 * oneDNN reports neither AMX nor AVX512_BF16 (the message names which). The choice is an error, not a silent
 * fallback to fp32: a run asked to be bf16 must not quietly be something else. */
rg_status rg_set_linear_precision(rg_precision p);
rg_precision rg_get_linear_precision(void);
/* "fp32" or "bf16" */
const char *rg_precision_name(rg_precision p);

#endif
