/* lm.c: the language-modelling tasks lm (synthetic) and lm_en (English, fortunes-min): the synthetic generator,
 * the English corpus reader with its train/validation rule, and their descriptors (see lm.h). The evaluation is in
 * lm_eval.c. */
#include "lm.h"
#include "task_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the synthetic language */

#define CHAIN_K 3

rg_status rg_lm_synth_generate(uint64_t seed, uint64_t stream, int64_t n, int32_t *out)
{
    if (n < 2 || (stream != 1 && stream != 2) || !out)
        return rg_error(RG_ERR_ARG, "synthetic language: n = %lld (>= 2), stream %llu (1 or 2)", (long long)n,
                        (unsigned long long)stream);
    static uint8_t next[26 * 26][CHAIN_K];
    static uint32_t weight[26 * 26][CHAIN_K];
    rg_rng r;
    rg_rng_seed(&r, seed, 0);
    for (int ctx = 0; ctx < 26 * 26; ctx++)
        for (int k = 0; k < CHAIN_K; k++) {
            for (bool dup = true; dup;) {
                next[ctx][k] = (uint8_t)rg_rng_below(&r, 26);
                dup = false;
                for (int q = 0; q < k; q++) dup |= next[ctx][q] == next[ctx][k];
            }
            weight[ctx][k] = 1 + rg_rng_below(&r, 8);
        }
    rg_rng_seed(&r, seed, stream);
    int32_t *t = out; /* symbols 0..25 while generating, tokens at the end */
    t[0] = (int32_t)rg_rng_below(&r, 26);
    t[1] = (int32_t)rg_rng_below(&r, 26);
    for (int64_t i = 2; i < n;) {
        if (i >= 32 && rg_rng_below(&r, 16) == 0) {
            int d = 8 + (int)rg_rng_below(&r, 17), len = 4 + (int)rg_rng_below(&r, 9);
            for (int j = 0; j < len && i < n; j++, i++) t[i] = t[i - d];
            continue;
        }
        int ctx = t[i - 2] * 26 + t[i - 1];
        uint32_t sum = 0;
        for (int k = 0; k < CHAIN_K; k++) sum += weight[ctx][k];
        uint32_t u = rg_rng_below(&r, sum);
        int k = 0;
        while (u >= weight[ctx][k]) u -= weight[ctx][k++];
        t[i++] = next[ctx][k];
    }
    for (int64_t i = 0; i < n; i++) t[i] += RG_TOK_SYM0;
    return RG_OK;
}

/* ------------------------------------------------------------------ the English corpus */

#define EN_FILE_MAX (16 << 20) /* a larger file is refused: the package's are ~100 KB together */

static const char *const en_files[] = {"fortunes", "literature", "riddles"};

/* Reads path into a malloc'ed buffer (*len bytes). RG_ERR_IO naming the file. */
static rg_status read_file(const char *path, unsigned char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rg_error(RG_ERR_IO, "%s: %s (the lm_en corpus is Debian's fortunes-min: apt-get install "
                        "fortunes-min, or tools/deps.sh)", path, strerror(errno));
    unsigned char *b = malloc(EN_FILE_MAX + 1);
    size_t n = b ? fread(b, 1, EN_FILE_MAX + 1, f) : 0;
    bool bad = ferror(f);
    fclose(f);
    if (!b) return rg_error(RG_ERR_NOMEM, "%s: out of memory", path);
    if (bad || n > EN_FILE_MAX) {
        free(b);
        return rg_error(RG_ERR_IO, "%s: %s", path, bad ? "read error" : "larger than 16 MiB");
    }
    *buf = b;
    *len = n;
    return RG_OK;
}

/* Appends the records of one file to the splits: a record is the lines between lines "%" (each line with its
 * '\n'); *k counts records over all files, a record going to valid when *k % 10 == 9. */
static void split_records(const unsigned char *b, size_t n, int64_t *k, int32_t *train, int64_t *nt, int32_t *valid,
                          int64_t *nv)
{
    bool in = false; /* inside a record */
    for (size_t i = 0, e; i < n; i = e + 1) {
        for (e = i; e < n && b[e] != '\n'; e++) {}
        if (e - i == 1 && b[i] == '%') {
            if (in) (*k)++;
            in = false;
            continue;
        }
        bool v = *k % 10 == 9;
        int32_t *dst = v ? valid : train;
        int64_t *c = v ? nv : nt;
        for (size_t j = i; j < e; j++) dst[(*c)++] = rg_lm_byte_token(b[j]);
        dst[(*c)++] = '\n';
        in = true;
    }
    if (in) (*k)++;
}

static rg_lm_corpus corpus_lm, corpus_en;
static bool en_ok;
static char en_error[512];

static rg_status load_en(void)
{
    unsigned char *b[3] = {0};
    size_t len[3] = {0}, total = 0;
    rg_status st = RG_OK;
    for (int f = 0; f < 3 && st == RG_OK; f++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", RG_LM_EN_DIR, en_files[f]);
        st = read_file(path, &b[f], &len[f]);
        total += len[f];
    }
    int32_t *train = st ? NULL : malloc(sizeof(int32_t) * (total + 3)), *valid = st ? NULL : malloc(sizeof(int32_t) * (total + 3));
    if (!st && (!train || !valid)) st = rg_error(RG_ERR_NOMEM, "lm_en: out of memory");
    int64_t k = 0, nt = 0, nv = 0;
    for (int f = 0; f < 3 && st == RG_OK; f++) split_records(b[f], len[f], &k, train, &nt, valid, &nv);
    for (int f = 0; f < 3; f++) free(b[f]);
    if (st == RG_OK && (nt < 2 || nv < 2)) st = rg_error(RG_ERR_IO, "lm_en: %s holds too little text", RG_LM_EN_DIR);
    if (st) { free(train); free(valid); return st; }
    corpus_en = (rg_lm_corpus){"lm_en", train, valid, nt, nv, RG_LM_EN_VOCAB,
                               "fortunes-min: " RG_LM_EN_DIR "/{fortunes,literature,riddles}, record k % 10 == 9 "
                               "validation"};
    return RG_OK;
}

static rg_status make_synth(void)
{
    int32_t *train = malloc(sizeof(int32_t) * RG_LM_SYNTH_TRAIN), *valid = malloc(sizeof(int32_t) * RG_LM_SYNTH_VALID);
    rg_status st = train && valid ? RG_OK : rg_error(RG_ERR_NOMEM, "lm: out of memory for the synthetic corpus");
    if (!st) st = rg_lm_synth_generate(RG_LM_SYNTH_SEED, 1, RG_LM_SYNTH_TRAIN, train);
    if (!st) st = rg_lm_synth_generate(RG_LM_SYNTH_SEED, 2, RG_LM_SYNTH_VALID, valid);
    if (st) { free(train); free(valid); return st; }
    corpus_lm = (rg_lm_corpus){"lm", train, valid, RG_LM_SYNTH_TRAIN, RG_LM_SYNTH_VALID, RG_TASK_VOCAB,
                               "synthetic: sparse order-2 Markov chain over 26 symbols with copied spans, PCG32 seed "
                               "20261201 (lm.h)"};
    return RG_OK;
}

/* ------------------------------------------------------------------ the descriptors */

static int lm_prompt_len(int n) { return 1; }
static int lm_target_len(int n) { return n; }

static rg_status lm_sample(const rg_task_desc *d, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    const rg_lm_corpus *c = d->user;
    if (c == &corpus_en && !en_ok) return rg_error(RG_ERR_IO, "%s", en_error);
    if (!c->train) return rg_error(RG_ERR_ARG, "task '%s': its corpus is not built (rg_lm_register)", d->name);
    if ((int64_t)n + 1 > c->n_train)
        return rg_error(RG_ERR_ARG, "task '%s': n = %d is longer than its training text (%lld tokens)", d->name, n,
                        (long long)c->n_train);
    int64_t s = (int64_t)rg_rng_below(rng, (uint32_t)(c->n_train - n));
    prompt[0] = c->train[s];
    memcpy(target, c->train + s + 1, sizeof(int32_t) * (size_t)n);
    return RG_OK;
}

static char en_char(int32_t tok) { return tok >= 32 && tok <= 126 ? (char)tok : tok == '\n' ? '/' : '?'; }

const rg_task_desc rg_task_desc_lm = {
    .name = "lm", .summary = "next-token prediction on a synthetic language (order-2 Markov chain + copied spans)",
    .vocab_size = RG_TASK_VOCAB, .prompt_len = lm_prompt_len, .target_len = lm_target_len, .sample = lm_sample,
    .token_char = rg_task_token_char, .user = &corpus_lm, .flags = RG_TASK_OPT_IN | RG_TASK_FULL_LEN,
    .views = RG_TASK_VIEW_PERPLEXITY};
const rg_task_desc rg_task_desc_lm_en = {
    .name = "lm_en", .summary = "next-byte prediction on English text (Debian fortunes-min)",
    .vocab_size = RG_LM_EN_VOCAB, .prompt_len = lm_prompt_len, .target_len = lm_target_len, .sample = lm_sample,
    .token_char = en_char, .user = &corpus_en, .flags = RG_TASK_OPT_IN | RG_TASK_FULL_LEN,
    .views = RG_TASK_VIEW_PERPLEXITY};

rg_status rg_lm_register(void)
{
    rg_status st;
    if (!corpus_lm.train && (st = make_synth())) return st;
    if (!corpus_en.train && !en_ok && !en_error[0]) {
        st = load_en();
        en_ok = st == RG_OK;
        if (st == RG_ERR_NOMEM) return st;
        if (!en_ok) snprintf(en_error, sizeof en_error, "%s", rg_last_error());
    }
    if ((st = rg_task_register(&rg_task_desc_lm, NULL))) return st;
    return rg_task_register(&rg_task_desc_lm_en, NULL);
}

const rg_lm_corpus *rg_lm_corpus_of(rg_task task)
{
    const rg_task_desc *d = rg_task_get(task);
    if (d == &rg_task_desc_lm) return corpus_lm.train ? &corpus_lm : NULL;
    if (d == &rg_task_desc_lm_en) {
        if (!en_ok) rg_error(RG_ERR_IO, "%s", en_error[0] ? en_error : "lm_en: not loaded (rg_lm_register)");
        return en_ok ? &corpus_en : NULL;
    }
    return NULL;
}
