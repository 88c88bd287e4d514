/* task.h: the experiment library (build/libropegrad_tasks.a; not part of libropegrad.a, not in ropegrad.h): the
 * ordering tasks of the length-extrapolation experiment (issue 7, "Task (exact)" and "Data"): the
 * vocabulary, the copy / reverse / sort targets, the token layout of a sample, the training-batch builder with its
 * loss mask, the evaluation prompt / expected continuation and scoring, and the canonical evaluation sets of
 * data/eval_sets.h5 (generator and loader). docs/data.md describes the same things for other implementations.
 *
 * Layout of a sample of length n (n content symbols x_1..x_n, targets y_1..y_n):
 *
 *     position  0    1 .. n      n+1   n+2 .. 2n+1   2n+2
 *     token     BOS  x_1 .. x_n  SEP   y_1 .. y_n    EOS        (length 2n+3)
 *
 * The model reads t[0..2n+1] (2n+2 tokens) and is trained to predict t[p+1] at input position p. Only the input
 * positions p = n+1 .. 2n+1 carry loss: p = n+1 (the SEP) predicts y_1, p = n+j predicts y_j, p = 2n+1 (y_n)
 * predicts EOS; that is n+1 loss positions per sample. Positions 0..n (predicting x_2..x_n and SEP, which are
 * random or fixed) and all padding carry the ignore index RG_TASK_IGNORE (-100, as PyTorch's ignore_index).
 *
 * Every function taking user input returns an rg_status (RG_ERR_ARG for n < 1, an unknown task, a token outside
 * the content symbols, a buffer too small; RG_ERR_IO / RG_ERR_FORMAT for files) with rg_last_error() set.
 */
#ifndef RG_TASK_H
#define RG_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "../tensor/rng.h"
#include "../tensor/tensor.h"

/* ------------------------------------------------------------------ vocabulary */

enum {
    RG_TOK_PAD = 0,       /* right padding of a batch; never predicted */
    RG_TOK_BOS = 1,       /* position 0 of every sequence */
    RG_TOK_SEP = 2,       /* between the input x and the output y */
    RG_TOK_EOS = 3,       /* after y */
    RG_TOK_SYM0 = 4,      /* the first content symbol (printed 'a'); symbols are 4..29 ('a'..'z') */
    RG_TASK_NSYM = 26,    /* number of content symbols */
    RG_TASK_VOCAB = 30    /* vocabulary size: 4 specials + 26 symbols */
};

/* Target value of a position that carries no loss (pass it as ignore_index to rg_cross_entropy). */
#define RG_TASK_IGNORE (-100)
/* Largest supported n (keeps every size well inside int). */
#define RG_TASK_MAX_N 100000

/* The printable character of a token: a..z for the symbols, '_' PAD, '^' BOS, '|' SEP, '$' EOS, '?' otherwise. */
char rg_task_token_char(int32_t tok);
/* Writes the characters of tokens[0..n) and a NUL into buf (cap bytes, truncating at cap-1 characters). Returns
 * the number of characters written. */
int rg_task_format(const int32_t *tokens, int n, char *buf, size_t cap);

/* ------------------------------------------------------------------ tasks */

typedef enum {
    RG_TASK_COPY = 0,     /* y = x */
    RG_TASK_REVERSE = 1,  /* y_j = x_{n+1-j} */
    RG_TASK_SORT = 2,     /* y = x sorted ascending by token id (repeats kept) */
    RG_TASK_COUNT = 3
} rg_task;

/* "copy", "reverse", "sort"; "?" for a value outside the enum. */
const char *rg_task_name(rg_task task);
/* Parses a task name (exact, lowercase) into *out. RG_ERR_ARG naming the allowed values for anything else
 * (including NULL). */
rg_status rg_task_parse(const char *name, rg_task *out);

/* y[0..n) = the task's target for x[0..n). x entries must be content symbols (4..29); x and y must not overlap.
 * RG_ERR_ARG: unknown task, n outside 1..RG_TASK_MAX_N, a non-symbol in x. */
rg_status rg_task_targets(rg_task task, const int32_t *x, int n, int32_t *y);

/* Draws one sample: x[j] = RG_TOK_SYM0 + rg_rng_below(rng, 26) for j = 0..n-1 in order (exactly n draws when
 * n >= 1), then y = the targets. RG_ERR_ARG as rg_task_targets. */
rg_status rg_task_sample(rg_task task, rg_rng *rng, int n, int32_t *x, int32_t *y);

/* Length 2n+3 of the full sequence of a sample of length n. */
static inline int rg_task_seq_len(int n) { return 2 * n + 3; }

/* Writes the full sequence t[0..2n+3) = BOS x SEP y EOS for x[0..n). RG_ERR_ARG as rg_task_targets. */
rg_status rg_task_sequence(rg_task task, const int32_t *x, int n, int32_t *t);

/* ------------------------------------------------------------------ training batches */

/* A training batch in caller-owned buffers (no allocation per batch). Set the buffers and their capacities
 * yourself, or once with rg_task_batch_alloc; the builders fill the rest.
 *
 *   tokens  int32 [B, T] row-major (row stride T): row b is t[0..2n_b+1] then RG_TOK_PAD up to T. The model input.
 *   targets int32 [B, T]: targets[b][p] = t[p+1] for p = n_b+1 .. 2n_b+1, RG_TASK_IGNORE elsewhere (including
 *           all padding). Flatten to B*T rows for rg_cross_entropy.
 *   len[b]  = 2n_b+2, the unpadded length of row b;  n[b] = n_b.
 *   T       = max_b len[b] = 2 max_b n_b + 2 (so at most 2 L_train + 2).
 *   n_loss  = sum_b (n_b + 1), the number of targets != RG_TASK_IGNORE (the loss is their mean).
 *
 * With right padding and causal attention, real positions never see the padding, so no attention mask is needed;
 * the padded positions' outputs are simply ignored. */
typedef struct {
    int32_t *tokens;      /* capacity `cap` elements */
    int32_t *targets;     /* capacity `cap` elements */
    int *len;             /* capacity `max_batch` entries */
    int *n;               /* capacity `max_batch` entries */
    int64_t cap;          /* elements of tokens and targets (B * T must fit) */
    int max_batch;        /* entries of len and n */
    /* set by the builders */
    int B, T;
    int64_t n_loss;
} rg_task_batch;

/* Elements needed in tokens/targets for B rows of n <= L_train: B * (2 L_train + 2). */
static inline int64_t rg_task_batch_cap(int B, int L_train) { return (int64_t)B * (2 * (int64_t)L_train + 2); }

/* Mallocs the four buffers for batches of up to max_batch rows with n <= L_train (once; free with
 * rg_task_batch_free). RG_ERR_ARG for sizes < 1 or n > RG_TASK_MAX_N, RG_ERR_NOMEM. */
rg_status rg_task_batch_alloc(rg_task_batch *b, int max_batch, int L_train);
/* Frees what rg_task_batch_alloc allocated and zeroes the struct. */
void rg_task_batch_free(rg_task_batch *b);

/* Builds a batch from given samples: row i has n[i] symbols at x + i * x_stride. RG_ERR_ARG: B outside
 * 1..max_batch, an n[i] outside 1..RG_TASK_MAX_N or > x_stride, a non-symbol, or B*T > cap. */
rg_status rg_task_batch_build(rg_task_batch *b, rg_task task, int B, const int *n, const int32_t *x, int x_stride);

/* Samples a training batch of B rows from rng: for each row in order, n = 1 + rg_rng_below(rng, L_train), then
 * the n symbols as rg_task_sample. RG_ERR_ARG: B outside 1..max_batch, L_train outside 1..RG_TASK_MAX_N,
 * B * (2 L_train + 2) > cap. Performs no allocation. */
rg_status rg_task_batch_sample(rg_task_batch *b, rg_task task, rg_rng *rng, int B, int L_train);

/* ------------------------------------------------------------------ evaluation */

/* The decoding prompt BOS x_1..x_n SEP: prompt[0..n+2). RG_ERR_ARG: n outside 1..RG_TASK_MAX_N, non-symbols. */
rg_status rg_task_prompt(const int32_t *x, int n, int32_t *prompt);
/* The expected continuation y_1..y_n EOS: expected[0..n+1). RG_ERR_ARG as rg_task_targets. */
rg_status rg_task_expected(rg_task task, const int32_t *x, int n, int32_t *expected);

/* Accumulated scores over one or more batches (zero-initialize, then rg_task_score_add). */
typedef struct {
    int64_t samples, exact;      /* samples scored, samples with every token right */
    int64_t tokens, correct;     /* tokens scored, tokens right */
} rg_task_score;

/* Scores B generated continuations gen [B, m] against expected [B, m] (row-major, m = n+1 tokens per row: a
 * token is right when equal to the expected one at the same index; no early stop, so EOS must appear at index n
 * and nothing is skipped). Adds to *s; if row_correct != NULL, row_correct[b] = the number of right tokens of
 * row b. RG_ERR_ARG: B < 1 or m < 1. */
rg_status rg_task_score_add(rg_task_score *s, const int32_t *gen, const int32_t *expected, int B, int m,
                            int *row_correct);
/* exact / samples: the fraction of samples with all tokens right (0 when nothing was scored). */
double rg_task_exact_match(const rg_task_score *s);
/* correct / tokens: the fraction of tokens right (0 when nothing was scored). */
double rg_task_token_acc(const rg_task_score *s);

/* ------------------------------------------------------------------ canonical evaluation sets (data/) */

#define RG_EVAL_SEED 20261130ULL           /* PCG32 seed of every evaluation stream */
#define RG_EVAL_COUNT 256                  /* samples per (task, length) */
#define RG_EVAL_NLENS 6
/* The test lengths of the file, ascending: 8, 16, 24, 32, 48, 64. */
extern const int rg_eval_lengths[RG_EVAL_NLENS];

/* The PCG32 stream of (task, n): 1000 * task + n (copy 0, reverse 1, sort 2), seeded with RG_EVAL_SEED. */
static inline uint64_t rg_eval_stream(rg_task task, int n) { return 1000u * (uint64_t)task + (uint64_t)n; }

/* Makes the evaluation samples of (task, n) in memory exactly as the file holds them: rg_rng_seed(rng,
 * RG_EVAL_SEED, rg_eval_stream(task, n)), then for i = 0..count-1 rg_task_sample (row i of x [count, n] and
 * y [count, n]). The first `count` rows do not depend on count. RG_ERR_ARG: unknown task, n outside
 * 1..RG_TASK_MAX_N, count < 1. */
rg_status rg_evalset_make(rg_task task, int n, int count, int32_t *x, int32_t *y);

/* Writes the whole evaluation file to `path` atomically (path.tmp.<pid>, fsync, rename; the temporary file is
 * removed on failure): for each task and each length in rg_eval_lengths, /<task>/n<len>/x and /y int32
 * [RG_EVAL_COUNT, len] (gzip 9 + shuffle, one chunk), group attributes task, n, stream, and root attributes
 * generator, description, seed, count, lengths, tasks, stream_formula, vocab. No timestamps are stored, so the
 * same HDF5/zlib build writes byte-identical files. RG_ERR_IO if the file cannot be written or renamed. */
rg_status rg_evalset_generate(const char *path);

/* One evaluation set in memory (malloc'ed by rg_evalset_load). */
typedef struct {
    rg_task task;
    int n;          /* content length */
    int count;      /* samples (RG_EVAL_COUNT in the canonical file) */
    int32_t *x;     /* [count, n] content symbols */
    int32_t *y;     /* [count, n] targets */
} rg_evalset;

/* Loads /<task>/n<n>/x and /y from the HDF5 file at path into *out (free with rg_evalset_free; *out is zeroed on
 * failure). Errors: RG_ERR_ARG unknown task name (the message lists the allowed ones) or n outside
 * 1..RG_TASK_MAX_N; RG_ERR_IO the file is missing or unreadable; RG_ERR_FORMAT the file is not HDF5, the group
 * /<task> or /<task>/n<n> is missing (the message lists what the file has: its task groups, or the lengths of the
 * task), the root attribute count is missing or not an integer in 1..2^31-1, a dataset x or y is missing, is not
 * of an integer type that int32 holds, is not 2-D [count, n], lacks storage (a chunk missing), x and y differ in
 * rows or have other than count rows, x holds a non-symbol, or y is not the task's target of x, the file is larger
 * than RG_EVAL_MAX_FILE_BYTES, or it crashes or hangs the HDF5 reader process; RG_ERR_NOMEM. The file is parsed by
 * HDF5 in a child process (src/io/h5_image.h), never in the caller's. */
#define RG_EVAL_MAX_FILE_BYTES ((uint64_t)256 << 20) /* 1000 x the committed data/eval_sets.h5 */
rg_status rg_evalset_load(const char *path, const char *task, int n, rg_evalset *out);
/* Frees the arrays and zeroes the struct (safe on a zeroed struct). */
void rg_evalset_free(rg_evalset *e);

#endif
