/* lm.h: language modelling for the perplexity-against-length curve of Press et al. 2022 ("Train Short, Test Long",
 * ICLR; Table 2 and App. B); docs/lm.md. Two corpora as registered tasks, and the evaluation of a model
 * by non-overlapping chunks and by a sliding window with exact accounting of which tokens are scored with which
 * context.
 *
 * Tasks (RG_TASK_OPT_IN | RG_TASK_FULL_LEN: every training row is n = L_train tokens read, n predicted; a sample of
 * length n is prompt = corpus[s], target = corpus[s+1..s+n] with s uniform in the training split):
 *   lm     the synthetic language (rg_lm_synth_generate): tokens 4..29 printed a..z, vocabulary 30;
 *   lm_en  English text: the files fortunes, literature and riddles of Debian's fortunes-min (BSD licence, see
 *          /usr/share/doc/fortunes-min/copyright; tools/deps.sh installs it) in RG_LM_EN_DIR, read in that order
 *          and cut into records at the lines "%"; record k (counting from 0 over the three files) goes to the
 *          validation split when k % 10 == 9, else to training; each record's text is followed by '\n'. Tokens are
 *          bytes: b for 1..126, 127 for any other byte; vocabulary 128.
 *
 * Evaluation of a token stream tok[0..N) at context E (the model reads E tokens and predicts the next of each):
 *   chunks (Press et al. §4, "nonoverlapping chunks"): windows k = 0..W-1 with W = floor((N-1)/E) read
 *     tok[kE .. kE+E) and score every prediction: targets tok[1..WE], the prediction at window offset j (target
 *     tok[kE+j+1]) having context j+1 tokens;
 *   sliding (App. B) with stride S (1 <= S <= E, S divides E): windows k >= 0 start at kS and read E tokens while
 *     kS + E <= WE; window 0 scores all E predictions, window k >= 1 only its last S (offsets E-S..E-1), so the
 *     scored targets are the same tok[1..WE] as chunks, each exactly once, every one past the first window with
 *     context >= E-S+1.
 * Perplexity = exp(sum of -log p(target) / number scored), natural log. */
#ifndef RG_TASK_LM_H
#define RG_TASK_LM_H

#include <stdint.h>

#include "task.h"
#include "../nn/nn.h"

#define RG_LM_SYNTH_SEED 20261201ULL  /* PCG32 seed of the synthetic language: stream 0 the chain, 1 training, 2 validation */
#define RG_LM_SYNTH_TRAIN (1 << 20)   /* tokens of the synthetic training split */
#define RG_LM_SYNTH_VALID 16384       /* tokens of the synthetic validation split */
#define RG_LM_EN_DIR "/usr/share/games/fortunes"
#define RG_LM_EN_VOCAB 128

/* The synthetic language of `seed` into out[0..n) (tokens RG_TOK_SYM0 + 0..25), stream 1 (training) or 2
 * (validation). The rule: an order-2 Markov chain over 26 symbols whose table comes from PCG32(seed, 0): for each
 * context (a, b) in order a = 0..25, b = 0..25, three distinct successors c_1..c_3 (each 26-way draws until new)
 * with weights 1 + below(8) each; the text from PCG32(seed, stream): t_0, t_1 uniform, then for i >= 2: once
 * i >= 32, with probability 1/16 (below(16) == 0) a copied span: d = 8 + below(17), len = 4 + below(9), and
 * t_i = t_{i-d} for len tokens (cut at n); otherwise t_i = c_k of (t_{i-2}, t_{i-1}) with probability
 * w_k / sum w (below(sum w)). Spans reward attention 8..24 tokens back (induction-style copying), within any
 * training context >= 32. RG_ERR_ARG for n < 2 or a stream other than 1, 2. */
rg_status rg_lm_synth_generate(uint64_t seed, uint64_t stream, int64_t n, int32_t *out);

/* The token of a text byte (lm_en): b for 1..126, else 127. */
static inline int32_t rg_lm_byte_token(unsigned char b) { return b >= 1 && b <= 126 ? (int32_t)b : 127; }

/* A corpus: its two splits and vocabulary. */
typedef struct {
    const char *name;            /* the task's name */
    const int32_t *train, *valid;
    int64_t n_train, n_valid;
    int vocab_size;
    const char *source;          /* one line: where the text comes from */
} rg_lm_corpus;

extern const rg_task_desc rg_task_desc_lm, rg_task_desc_lm_en;

/* Registers lm and lm_en (again: a no-op), generating the synthetic corpus and reading the English one. A missing or
 * unreadable English file does not fail: lm_en is registered and its samples fail with that message (RG_ERR_IO,
 * naming the file and the package). Errors: RG_ERR_NOMEM; those of rg_task_register. */
rg_status rg_lm_register(void);
/* The corpus of a registered LM task, or NULL (another task, or its text could not be read: rg_last_error says). */
const rg_lm_corpus *rg_lm_corpus_of(rg_task task);

/* ------------------------------------------------------------------ evaluation */

typedef enum { RG_LM_CHUNKS = 0, RG_LM_SLIDING = 1 } rg_lm_method;
/* One window: reads tok[start .. start+len), scores its predictions at offsets score_from..len-1 (the prediction at
 * offset j is of tok[start+j+1] with context j+1). */
typedef struct { int64_t start; int len, score_from; } rg_lm_window;

/* The windows of the method (see the top) over N tokens at context E into w (NULL: count only; else room for cap).
 * Returns their number, or -1 with rg_error set: E < 1, N < E + 1, a stride outside 1..E or not dividing E
 * (sliding), cap too small. */
int64_t rg_lm_windows(int64_t N, int E, rg_lm_method method, int stride, rg_lm_window *w, int64_t cap);

/* What an evaluation scored. */
typedef struct {
    double nll;         /* sum of -log p(target), nats */
    int64_t scored;     /* targets scored */
    double *pos_nll;    /* optional [E]: the sum at each window offset j (context j+1), added to */
    int64_t *pos_count; /* optional [E]: targets scored at each offset */
} rg_lm_score;

/* Evaluates model m on tok[0..N) at context E by the method (windows as rg_lm_windows), `batch` windows per
 * forward (no gradients, positions 0..E-1 in every window), adding to *s (zero it first; pos_nll/pos_count may be
 * NULL). Errors: those of rg_lm_windows; RG_ERR_ARG a token outside the model's vocabulary or a position past a
 * learned table (E > max_len), batch < 1; RG_ERR_NOMEM. */
rg_status rg_lm_evaluate(rg_model *m, const int32_t *tok, int64_t N, int E, rg_lm_method method, int stride,
                         int batch, rg_lm_score *s);

/* exp(nll / scored) (NaN when nothing was scored). */
double rg_lm_perplexity(const rg_lm_score *s);

#endif
