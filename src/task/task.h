/* task.h: the tasks library (build/libropegrad_tasks.a; not part of libropegrad.a, not in ropegrad.h): the task
 * registry (rg_task_desc, rg_task_register: a program adds its own task, and the experiment engine trains and
 * evaluates it like a built-in one; docs/extending.md, examples/custom_task.c) and the built-in ordering tasks of
 * the length-extrapolation experiment (docs/data.md): the vocabulary, the copy / reverse / sort targets, the token layout of a sample, the training-batch builder with its
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

#include <stdbool.h>
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

/* ------------------------------------------------------------------ tasks: the registry */

/* A task is an index into the task registry (rg_task_register). The three ordering tasks are registered first,
 * always at these indices; a program's own tasks follow in the order it registers them. */
typedef int rg_task;
enum {
    RG_TASK_COPY = 0,     /* y = x */
    RG_TASK_REVERSE = 1,  /* y_j = x_{n+1-j} */
    RG_TASK_SORT = 2,     /* y = x sorted ascending by token id (repeats kept) */
    RG_TASK_BUILTIN = 3   /* the number of built-in (ordering) tasks: the tasks of data/eval_sets.h5 */
};
#define RG_TASK_MAX 32        /* registry capacity (built-in tasks included) */
#define RG_TASK_NAME_MAX 31   /* longest task name */

/* A task descriptor, the model of HF's ROPE_INIT_FUNCTIONS entries: everything the experiment engine (and any
 * training loop) needs to know about a task, as named hooks. A sample "of length n" is a prompt and the target
 * the model must continue it with; the full sequence is prompt ++ target. Training reads the sequence without its
 * last token and puts loss only on the positions that predict target tokens (see rg_task_batch_sample);
 * evaluation greedy-decodes target_len(n) tokens after the prompt and scores them (rg_task_score_rows).
 *
 * Contract of the hooks (the registry calls them only with 1 <= n <= RG_TASK_MAX_N):
 *   prompt_len(n), target_len(n) >= 1, non-decreasing in n (the batch buffers are sized from n = L_train), and
 *     prompt_len(n) + target_len(n) <= 2^20.
 *   sample(task, rng, n, prompt, target): draws one sample from rng into prompt[0..prompt_len(n)) and
 *     target[0..target_len(n)); every token in 1..vocab_size-1 (0 is the padding token RG_TOK_PAD); deterministic
 *     given the rng's state (evaluation sets are built from a seed with it); no allocation. Returns RG_OK, or an
 *     error status with rg_error set (then the caller fails with that message).
 *   score (optional; NULL: a token is right when equal to the expected one at the same index): the number of
 *     right tokens (0..target_len(n)) of the generated continuation gen[0..target_len(n)) of prompt, where
 *     expected is the target sample drew; a sample is an exact match when all are right.
 *   token_char (optional): the printable character of a token, for the program's own messages (the library does
 *     not call it; rg_task_format prints the ordering tasks' characters).
 * The descriptor and the strings it points to must outlive every use (a static object is the usual case). */
typedef struct rg_task_desc rg_task_desc;
/* The shape of a grid size: `frames` grids of rows x cols (frames 1 for a single grid). */
typedef struct { int frames, rows, cols; } rg_grid_shape;
struct rg_task_desc {
    const char *name;         /* 1..RG_TASK_NAME_MAX of [a-z0-9_], not "all": --task, reports, file names */
    const char *summary;      /* one line for --help and docs */
    int vocab_size;           /* the model's vocabulary for this task: tokens 0..vocab_size-1 (2..2^24) */
    int (*prompt_len)(int n);
    int (*target_len)(int n);
    rg_status (*sample)(const rg_task_desc *task, rg_rng *rng, int n, int32_t *prompt, int32_t *target);
    int (*score)(const rg_task_desc *task, int n, const int32_t *prompt, const int32_t *gen, const int32_t *expected);
    char (*token_char)(int32_t tok);
    void *user;               /* the task's own data, for its hooks */
    /* Optional (NULL: every sequence sits at positions 0..T-1). The position ids of a sample's full sequence
     * prompt ++ target, T = prompt_len(n) + target_len(n) ids into pos[0..T), each in [0, RG_TASK_MAX_POSITION):
     * training feeds ids 0..T-2 with the tokens (rg_task_batch_sample fills rg_task_batch.positions), evaluation
     * prefills the prompt at ids 0..P-1 and generates target token j at id P+j (rg_generate's explicit positions).
     * rng: training's randomness (e.g. a random start offset), drawn right after the row's sample from the same
     * stream; NULL at evaluation, where the ids must be deterministic. Position coupling (Cho et al. 2024,
     * src/task/tricks.c) is the use. No allocation. */
    rg_status (*positions)(const rg_task_desc *task, rg_rng *rng, int n, int32_t *pos);
    const char *base;         /* optional: the task this one is a variant of ("copy" for copy_hints), or NULL */
    unsigned flags;           /* RG_TASK_OPT_IN, RG_TASK_FULL_LEN (or 0) */
    /* Grid tasks (src/task/grid.c, docs/grids.md): the three hooks below, all set or all NULL. A grid task's size n
     * is a grid size code (rg_grid_code below: 100 F + 10 H + W), not a length.
     *   shape(task, n, s): true when n is a size of the task, its frames / rows / columns then in *s; false
     *     otherwise (every registry function then refuses n with RG_ERR_ARG). prompt_len and target_len need only
     *     be right at the sizes shape accepts (and >= 1 everywhere).
     *   train_size(task, rng, L_train): the size of one training row, drawn from rng (training sizes "up to"
     *     L_train: e.g. H, W drawn in 1..4 for L_train 4x4); must be a size whose prompt_len + target_len is at
     *     most L_train's (the batch is sized from L_train). Without the hook: n = 1 + rg_rng_below(rng, L_train).
     *   axes(task, n, prompt, axes, stride): the (frame, row, column) ids of the full sequence prompt ++ target,
     *     axis a of token t at axes[a * stride + t] (stride >= T = prompt_len(n) + target_len(n)), each id in
     *     [0, RG_TASK_MAX_POSITION); a function of n and the prompt only (grid_lookup's answer ids follow its
     *     queries; never of the target, which evaluation does not know), the same at training and evaluation; no
     *     allocation. Training
     *     feeds the first T-1 tokens' ids (rg_task_batch.axes), evaluation gives all T to rg_generate_axes. The
     *     1-D positions stay 0..T-1 (the raster index) unless the task has a positions hook too. */
    bool (*shape)(const rg_task_desc *task, int n, rg_grid_shape *s);
    int (*train_size)(const rg_task_desc *task, rg_rng *rng, int L_train);
    rg_status (*axes)(const rg_task_desc *task, int n, const int32_t *prompt, int32_t *axes, int64_t stride);
    /* Geometry, as a program running experiments (train_order's engine) asks it; all optional. The answer of a
     * sample of size n starts at index prompt_len(n) of the sequence and is target_len(n) tokens long.
     *   longest_distance(task, n): the longest distance between the position ids of two tokens a training sequence
     *     of size n feeds the model (its first prompt_len(n) + target_len(n) - 1 tokens). NULL: derived from the
     *     position ids (rg_task_longest_distance). T5's fair max_distance and the report's sentence on the longest
     *     training distance read it.
     *   views: the report's views of the task, RG_TASK_VIEW_* (0: derived, rg_task_views).
     *   train_len: the training size --train-len defaults to for this task (a grid task's size code, e.g. 144 for
     *     4x4), or 0: the program's own default. */
    int (*longest_distance)(const rg_task_desc *task, int n);
    unsigned views;
    int train_len;
};

/* rg_task_desc.flags. OPT_IN: not selected by train_order's --task all (name it). FULL_LEN: every training row has
 * n = L_train (rg_task_batch_sample draws no n), as a language model trains at a fixed context. */
#define RG_TASK_OPT_IN 1u
#define RG_TASK_FULL_LEN 2u
/* rg_task_desc.views: EXACT exact match and token accuracy by test length (greedy decoding of the answer: tables,
 * curves, heatmaps); POSITIONS the accuracy of each answer position (target_len(n) of them) and where the answer
 * first goes wrong; PERPLEXITY perplexity by context length instead of greedy decoding (a language model); GRID the
 * per-cell accuracy images of a grid task. */
#define RG_TASK_VIEW_EXACT 1u
#define RG_TASK_VIEW_POSITIONS 2u
#define RG_TASK_VIEW_PERPLEXITY 4u
#define RG_TASK_VIEW_GRID 8u
/* The views of a task: its descriptor's views (GRID only for a grid task: the shape hook), or when 0, EXACT | GRID
 * for a grid task and EXACT | POSITIONS for any other; 0 for an unknown task. */
unsigned rg_task_views(rg_task task);
/* The longest distance between two position ids of a training sequence of size n: the task's longest_distance
 * hook, else the largest minus the smallest of the first total_len(n) - 1 ids of rg_task_positions (evaluation's
 * ids; a random training offset shifts them all alike): 2n + 1 for the ordering tasks. -1 (with rg_error) for an
 * unknown task, a bad n, or a hook's error or negative result. */
int rg_task_longest_distance(rg_task task, int n);

/* Position ids a positions hook may give: [0, 2^20), nn.h's RG_MAX_POSITION. */
#define RG_TASK_MAX_POSITION (1 << 20)

/* The position ids of a sample of (task, n) into pos[0..total_len(n)): the task's positions hook (rng as there:
 * NULL for evaluation), or 0..T-1 without one. RG_ERR_ARG unknown task, bad n, NULL pos; RG_ERR_FORMAT an id outside
 * [0, RG_TASK_MAX_POSITION) (naming the task and index); the hook's own errors. */
rg_status rg_task_positions(rg_task task, rg_rng *rng, int n, int32_t *pos);

/* ------------------------------------------------------------------ grid sizes (grid tasks: docs/grids.md)
 * A grid task's size n is the code n = 100 F + 10 H + W of F frames of H rows x W columns, each of F, H, W in
 * 1..RG_GRID_MAX_SIDE (so n is in 111..999: within train_order's largest test n, and the evaluation streams
 * 1000 * key + n stay distinct). Text form: "HxW" (F = 1) or "FxHxW"; "4x4" is 144, "3x4x4" is 344. */
#define RG_GRID_MAX_SIDE 9
/* The axes of a token, frame, row, column, in this order: nn/pos.h's RG_POS_AXES and RG_AXIS_FRAME / _ROW / _COL. */
#define RG_TASK_AXES 3
static inline int rg_grid_code(int frames, int rows, int cols) { return 100 * frames + 10 * rows + cols; }
/* Decodes n into *s (s may be NULL): true when n is a code (every digit 1..9), false otherwise. */
bool rg_grid_decode(int n, rg_grid_shape *s);
/* Parses a size: "HxW", "FxHxW" (each 1..RG_GRID_MAX_SIDE) into its code, or a plain decimal integer 1..
 * RG_TASK_MAX_N (a length) as itself. RG_ERR_ARG naming the text otherwise. */
rg_status rg_size_parse(const char *text, int *n);
/* True when the task is a grid task (its descriptor has the grid hooks). */
bool rg_task_is_grid(rg_task task);
/* The shape of size n of a grid task. RG_ERR_ARG unknown task, not a grid task, n not one of its sizes. */
rg_status rg_task_shape(rg_task task, int n, rg_grid_shape *s);
/* The size's name into buf: "4x8" (grid, one frame), "3x4x4" (frames), or "%d" (a 1-D task, or n not a size of
 * the grid task). Returns buf. */
const char *rg_task_size_text(rg_task task, int n, char *buf, size_t cap);
/* The axis ids [RG_TASK_AXES, T] (T = rg_task_total_len) of a sample of size n with prompt `prompt` (its
 * prompt_len(n) tokens), axis a of token t at axes[a * stride + t]: the task's axes hook, checked (ids in [0, RG_TASK_MAX_POSITION)); a task without one gets
 * every axis = 0..T-1 (what a forward without axes sees). RG_ERR_ARG unknown task, bad n, stride < T, NULL axes or prompt;
 * RG_ERR_FORMAT an id out of range (naming task, axis and token); the hook's errors. */
rg_status rg_task_axes(rg_task task, int n, const int32_t *prompt, int32_t *axes, int64_t stride);
/* A training row's size drawn from rng: the task's train_size hook, n = L_train for a RG_TASK_FULL_LEN task, else
 * 1 + rg_rng_below(rng, L_train). -1 (with rg_error) for an unknown task, a bad L_train, or a hook result that is
 * not a size of the task. */
int rg_task_train_size(rg_task task, rg_rng *rng, int L_train);
/* The size q/Q of the way to L (1 <= q <= Q): ceil(q L / Q) for a 1-D task; for a grid task every side of L's
 * shape scaled so (rounded up, at least 1), then the frames raised until the task accepts the size (L if none).
 * -1 for an unknown task or bad arguments. The held-out sets of steps-to-learn use it. */
int rg_task_size_part(rg_task task, int L, int q, int Q);

/* The descriptors of the built-in ordering tasks (registered at indices RG_TASK_COPY, _REVERSE, _SORT). */
extern const rg_task_desc rg_task_desc_copy, rg_task_desc_reverse, rg_task_desc_sort;

/* Adds a task to the registry; *id (if not NULL) receives its index. Registering the same descriptor (the same
 * address) again returns its index. Errors (RG_ERR_ARG, nothing registered): NULL desc or hook (score and
 * token_char may be NULL), a name that is empty, too long, not [a-z0-9_], "all", or already registered by another
 * descriptor, vocab_size outside 2..2^24, prompt_len(1) or target_len(1) < 1, the registry full (RG_TASK_MAX).
 * Not thread-safe: register before starting threads (the engine forks its jobs after parsing). */
rg_status rg_task_register(const rg_task_desc *desc, rg_task *id);
/* The number of registered tasks (RG_TASK_BUILTIN before any rg_task_register). */
int rg_task_count(void);
/* The descriptor of a registered task, or NULL for an index outside 0..rg_task_count()-1. */
const rg_task_desc *rg_task_get(rg_task task);

/* The task's prompt and target lengths at n, their sum (the full sequence), -1 for an unknown task or n outside
 * 1..RG_TASK_MAX_N. For the ordering tasks: n + 2, n + 1 and 2n + 3 (rg_task_seq_len). */
int rg_task_prompt_len(rg_task task, int n);
int rg_task_target_len(rg_task task, int n);
int rg_task_total_len(rg_task task, int n);

/* One sample of (task, n) from rng through the descriptor's sample hook, checked: every token in
 * 1..vocab_size-1. RG_ERR_ARG unknown task or n outside 1..RG_TASK_MAX_N; RG_ERR_FORMAT (naming the task, the
 * index and the token) for a token out of range; the hook's own errors. For the ordering tasks the draws and the
 * result equal rg_task_sample followed by rg_task_prompt and rg_task_expected. */
rg_status rg_task_draw(rg_task task, rg_rng *rng, int n, int32_t *prompt, int32_t *target);

/* Scores B generated continuations gen [B, G] (G = target_len(n)) of prompts [B, P] against expected [B, G] with
 * the task's score hook (token equality without one), adding to *s (see rg_task_score below). RG_ERR_ARG unknown
 * task, bad n or B < 1, RG_ERR_FORMAT a score hook returning a value outside 0..G. */
typedef struct rg_task_score rg_task_score;
rg_status rg_task_score_rows(rg_task task, int n, rg_task_score *s, const int32_t *prompts, const int32_t *gen,
                             const int32_t *expected, int B);

/* The PCG32 stream of the evaluation and held-out sets of (task, n): 1000 * key + n, key = the task's index for the
 * ordering tasks (the streams of data/eval_sets.h5), and 2^20 + the 32-bit FNV-1a hash of the name for a
 * registered task (so its sets do not depend on the order of registration). */
uint64_t rg_task_stream(rg_task task, int n);

/* ------------------------------------------------------------------ the ordering tasks (built in) */

/* The registered name of a task ("copy", "reverse", "sort", or a registered task's); "?" for an index outside the
 * registry. */
const char *rg_task_name(rg_task task);
/* Parses a registered task name (exact, lowercase) into *out. RG_ERR_ARG naming the registered names for anything
 * else (including NULL). */
rg_status rg_task_parse(const char *name, rg_task *out);

/* The functions of this section take content x and targets y: they apply to the ordering tasks only (a task index
 * outside 0..RG_TASK_BUILTIN-1 is RG_ERR_ARG "not an ordering task"); a registered task goes through its
 * descriptor (rg_task_draw, rg_task_batch_sample, rg_task_evalset).
 *
 * y[0..n) = the task's target for x[0..n). x entries must be content symbols (4..29); x and y must not overlap.
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
    int32_t *positions;   /* capacity `cap` + 1 elements, or NULL: [B, T] position ids, filled for a task with a
                             positions hook (then required; rg_task_batch_alloc_for allocates it), padding at 0 */
    int64_t cap;          /* elements of tokens and targets (B * T must fit) */
    int max_batch;        /* entries of len and n */
    /* set by the builders */
    int B, T;
    int64_t n_loss;
    int32_t *axes;        /* capacity RG_TASK_AXES * (cap + max_batch) elements, or NULL: [RG_TASK_AXES, B, T] axis
                             ids (axis-major, as rg_batch.axes: RG_TASK_AXES = RG_POS_AXES), filled for a grid task (then required;
                             rg_task_batch_alloc_for allocates it), padding at 0 */
} rg_task_batch;

/* Elements needed in tokens/targets for B rows of n <= L_train: B * (2 L_train + 2). */
static inline int64_t rg_task_batch_cap(int B, int L_train) { return (int64_t)B * (2 * (int64_t)L_train + 2); }

/* Mallocs the four buffers for batches of up to max_batch rows with n <= L_train (once; free with
 * rg_task_batch_free), sized for the ordering tasks. RG_ERR_ARG for sizes < 1 or n > RG_TASK_MAX_N, RG_ERR_NOMEM. */
rg_status rg_task_batch_alloc(rg_task_batch *b, int max_batch, int L_train);
/* Elements needed in tokens/targets for B rows of n <= L_train of any registered task: B * (total_len(L_train) - 1)
 * (rg_task_batch_cap for the ordering tasks); -1 for an unknown task or bad sizes. */
int64_t rg_task_batch_cap_of(rg_task task, int B, int L_train);
/* rg_task_batch_alloc sized for the task (rg_task_batch_cap_of). RG_ERR_ARG also for an unknown task. */
rg_status rg_task_batch_alloc_for(rg_task_batch *b, rg_task task, int max_batch, int L_train);
/* Frees what rg_task_batch_alloc allocated and zeroes the struct. */
void rg_task_batch_free(rg_task_batch *b);

/* Builds a batch from given samples: row i has n[i] symbols at x + i * x_stride. RG_ERR_ARG: B outside
 * 1..max_batch, an n[i] outside 1..RG_TASK_MAX_N or > x_stride, a non-symbol, or B*T > cap. */
rg_status rg_task_batch_build(rg_task_batch *b, rg_task task, int B, const int *n, const int32_t *x, int x_stride);

/* Samples a training batch of B rows of any registered task from rng: for each row in order,
 * n = 1 + rg_rng_below(rng, L_train) (n = L_train, no draw, for a RG_TASK_FULL_LEN task), then the sample as
 * rg_task_draw, then (a task with a positions hook) its positions from rng into positions (for the ordering tasks: the n symbols as
 * rg_task_sample). Row b of tokens is the sequence prompt ++ target without its last token (P_b + G_b - 1 tokens,
 * len[b]), then PAD; targets[b][p] = the sequence's token p+1 for p = P_b-1 .. P_b+G_b-2 (every target token),
 * RG_TASK_IGNORE elsewhere; n_loss = sum_b G_b. For the ordering tasks this is exactly the layout at the top.
 * RG_ERR_ARG: unknown task, B outside 1..max_batch, L_train outside 1..RG_TASK_MAX_N,
 * rg_task_batch_cap_of(task, B, L_train) > cap; the errors of rg_task_draw. Performs no allocation. */
/* A grid task: each row's size is rg_task_train_size, and axes [RG_TASK_AXES, B, T] gets the ids of every fed token
 * (rg_task_axes of its sample; padding 0). */
rg_status rg_task_batch_sample(rg_task_batch *b, rg_task task, rg_rng *rng, int B, int L_train);

/* ------------------------------------------------------------------ evaluation */

/* The decoding prompt BOS x_1..x_n SEP: prompt[0..n+2). RG_ERR_ARG: n outside 1..RG_TASK_MAX_N, non-symbols. */
rg_status rg_task_prompt(const int32_t *x, int n, int32_t *prompt);
/* The expected continuation y_1..y_n EOS: expected[0..n+1). RG_ERR_ARG as rg_task_targets. */
rg_status rg_task_expected(rg_task task, const int32_t *x, int n, int32_t *expected);

/* Accumulated scores over one or more batches (zero-initialize, then rg_task_score_add). */
struct rg_task_score {
    int64_t samples, exact;      /* samples scored, samples with every token right */
    int64_t tokens, correct;     /* tokens scored, tokens right */
};

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

/* The PCG32 stream of (task, n) of an ordering task: 1000 * task + n (copy 0, reverse 1, sort 2), seeded with
 * RG_EVAL_SEED (rg_task_stream for any task). */
static inline uint64_t rg_eval_stream(rg_task task, int n) { return 1000u * (uint64_t)task + (uint64_t)n; }

/* True when the evaluation file (rg_evalset_generate) holds sets of the task: the ordering tasks; a registered
 * task's sets are built from a seed (rg_task_evalset). */
bool rg_evalset_has(rg_task task);

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

/* One evaluation set in memory (malloc'ed by rg_evalset_load or rg_task_evalset). */
typedef struct {
    rg_task task;
    int n;          /* the sample length */
    int count;      /* samples (RG_EVAL_COUNT in the canonical file) */
    int32_t *x;     /* [count, n] content symbols (ordering tasks only; NULL for a registered task) */
    int32_t *y;     /* [count, n] targets (ordering tasks only; NULL for a registered task) */
    int prompt_len, target_len;  /* P = rg_task_prompt_len(task, n), G = rg_task_target_len(task, n) */
    int32_t *prompt;             /* [count, P] the prompts */
    int32_t *expected;           /* [count, G] the expected continuations */
} rg_evalset;

/* The evaluation set of any registered task built from a seed: rg_rng_seed(rng, seed, rg_task_stream(task, n)),
 * then `count` samples by rg_task_draw in order; *out holds prompt/expected (and x/y for an ordering task, equal to
 * rg_evalset_make's). With seed RG_EVAL_SEED and RG_EVAL_COUNT an ordering task's set equals the file's.
 * RG_ERR_ARG unknown task, n outside 1..RG_TASK_MAX_N, count < 1; RG_ERR_NOMEM; the errors of rg_task_draw.
 * *out is zeroed on failure; free with rg_evalset_free. */
rg_status rg_task_evalset(rg_task task, int n, int count, uint64_t seed, rg_evalset *out);

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
