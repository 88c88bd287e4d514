/* pos_conformance.h: the conformance check of a position encoding (pos_conformance.c), the analogue of
 * torch.autograd.gradcheck plus ggml's test-backend-ops for one registered descriptor (pos.h): any encoding, built
 * in or a user's, is run through the same checks on small random shapes the check chooses, with positions past 150:
 *
 *   grad input / grad rotate_qk / grad score_bias   op level: each hook the descriptor has, called as the model
 *        calls it (state_new, add_params at every site of 2 layers, prepare), on random inputs of order 1; the
 *        gradient of sum(w * out) (w random; masked score entries weighted 0) with respect to the hook's tensor
 *        inputs and every parameter the encoding registered, against central differences at every element.
 *   grad model      the reference model (2 layers, d_model 16, 2 heads, its own initialization: no refill), the
 *        gradient of sum(w * logits) with respect to every parameter, at the 4 elements of each parameter with the
 *        largest analytic gradient and 4 random ones.
 *   kv-cache        logits of a prefill and then one token per forward through rg_kv_cache against one full forward.
 *   checkpoint      rg_checkpoint_save, rg_checkpoint_open: the same logits, bit for bit (bound 0).
 *   shift           (RG_POS_RELATIVE encodings) logits at positions p and p + 37 for every token, against 16 times
 *        the encoding's own rounding noise (at least e): the kv-cache check's difference, the same logits computed
 *        in another order (equal in exact arithmetic).
 *   rope_scaling T  (rotary encodings: flags with RG_POS_ROTARY) for T = pi, ntk, yarn, llama3, dynamic at
 *        factor 2 with original length 24: the logits past 24 must change (the encoding applies the scaling); the
 *        line's error is the relative change and its bound the least change accepted.
 *
 * Error measure of the gradient checks: per tensor, max_j |fd_j - an_j| / max(|fd_j|, |an_j|, 1e-2 G), G the
 * largest |an| or |fd| of the check, fd_j the nearest to an_j of the central, forward and backward differences (at
 * a kink within the step, a ReLU's, the analytic gradient is a one-sided one). An element is compared relatively,
 * but never against less than a hundredth of the gradient's scale: a gradient that is zero in exact arithmetic
 * (k_proj.bias) is then compared at a scale where finite-difference noise is small, instead of noise against noise.
 * The step and the bounds follow from the build's epsilon e (float64 2.2e-16, float32 1.2e-7): central differences
 * have truncation error ~h^2 and rounding error ~e/h, smallest at h ~ e^(1/3) (6e-6 in float64, 4.9e-3 in float32),
 * where both are ~e^(2/3); the bounds are fixed multiples of e^(2/3) (the numbers: docs/extending.md). The logit
 * comparisons (kv-cache, shift) are max |a - b| / max |b|, kv-cache's against a multiple of e, shift's against a
 * multiple of the measured noise (above).
 *
 * Both libraries define it: the float64 build (libropegrad_f64.a) is the strict check; the float32 build
 * (libropegrad.a, train_order --check-pos) runs the same checks at float32's bounds.
 */
#ifndef RG_NN_POS_CONFORMANCE_H
#define RG_NN_POS_CONFORMANCE_H

#include "pos.h"

#include <stdio.h>

/* One line of the report: the check's name, the measured error and its bound (pass: error <= bound; rope_scaling
 * lines: error >= bound), and a detail (the worst tensor, or why a check was skipped). */
typedef struct {
    const char *encoding;
    char check[48];
    double error, bound;
    bool pass;
    char detail[128];
} rg_pos_check;

/* Where the lines go: printed to file (if not NULL), one per check ("PASS grad model  3.1e-09 <= 1e-06  worst
 * blocks.0.attn.k_proj.bias"), and handed to fn (if not NULL) with user. */
typedef struct {
    FILE *file;
    void (*fn)(const rg_pos_check *line, void *user);
    void *user;
} rg_pos_report;

/* The step h of the central differences, and the bound of a check by its name ("grad model", "kv-cache", ...: the
 * names the report prints), of this build (float32 or float64): see above; for "shift", the least bound (16 e: the
 * bound when the measured noise is at most e). */
double rg_pos_conformance_step(void);
double rg_pos_conformance_bound(const char *check);

/* Runs every check that applies to the registered encoding `name` and reports one line per check; *n_failed (may
 * be NULL) is the number of failed checks. RG_OK when the checks ran (failed or not); RG_ERR_ARG with a message for
 * an unregistered name or an encoding that refuses the check's config (d_model 16, 2 heads, 2 layers, max_len 200);
 * RG_ERR_IO when the checkpoint's temporary file ($TMPDIR or /tmp) cannot be written; RG_ERR_NOMEM. */
rg_status rg_pos_conformance(const char *name, const rg_pos_report *report, int *n_failed);

#endif
