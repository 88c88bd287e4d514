/* common.h: helpers shared by the test binaries (random parameters, closeness checks, gradient-check losses and
 * reports, HDF5 fixture reading, reference models loaded from fixtures).
 * Include after <cmocka.h>'s prerequisites; every check fails the running cmocka test with a message. */
#ifndef RG_TEST_COMMON_H
#define RG_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ropegrad.h"

/* A parameter with N(0, std^2) entries from rng. */
rg_tensor *tc_param_randn(const char *name, int ndim, const int *shape, rg_rng *rng, double std);
/* Fills t with N(0, std^2) values. */
void tc_fill_randn(rg_tensor *t, rg_rng *rng, double std);
/* Fails the test (with `what`, the index and both values) unless |got[i] - want[i]| <= atol + rtol*|want[i]|
 * for all i < n. */
void tc_assert_close(const char *what, const rg_real *got, const double *want, int64_t n, double atol, double rtol);

/* max(a, b) that propagates NaN (fmax drops it: fmax(0, NaN) = 0, so a NaN difference would pass a "worst <= tol"
 * check). Use it for every running maximum of errors. */
static inline double tc_max(double a, double b) { return a != a || b != b ? a + b : (a > b ? a : b); }

/* Gradient checks (the float64 gradcheck_* binaries). */
/* sum(out * w) for a fixed weight array w of out->numel values: a scalar loss for rg_gradcheck. */
rg_tensor *tc_weighted_sum(rg_ctx *c, rg_tensor *out, const rg_real *w);
/* A malloc'ed array of n standard normal values from rng. */
rg_real *tc_random_weights(int64_t n, rg_rng *rng);
/* Prints "name (padded to width) worst rel err ... (n inputs)" and every input whose relative error rel[i] is not
 * below tol, then fails the test unless worst < tol. */
void tc_gradcheck_report(int width, const char *name, double worst, const double *rel, int n, double tol);
/* The report of rg_gradcheck over every parameter of m (rel[i] for m->params.items[i]): a "k_proj.bias" whose
 * gradient is below 1e-12 everywhere is zero in exact arithmetic (the key bias only adds q . b_k, constant along a
 * row of scores), so its rel (rounding noise against rounding noise) is set to 0; every parameter at or above tol is
 * printed by name, then "model NAME (N params)" is reported as tc_gradcheck_report (failing unless worst < tol). */
void tc_gradcheck_model_report(int width, const char *name, const rg_model *m, double *rel, double tol);

/* Fixture reading (HDF5). Paths are relative to the repository root (tests run from it). Each function fails
 * the running test with a message naming the file and dataset if anything is missing. */
/* Reads a dataset as doubles into a malloc'ed array; writes the number of elements and, if shape != NULL, the
 * dims (up to 4) and ndim. */
double *tc_h5_read(const char *file, const char *dataset, int64_t *n, int *shape, int *ndim);
/* Reads an integer dataset as int32. */
int32_t *tc_h5_read_int(const char *file, const char *dataset, int64_t *n, int *shape, int *ndim);
/* Reads a numeric attribute of an object ("/" for the root) as double. */
double tc_h5_attr(const char *file, const char *object, const char *attr);
/* Whether object of file has the attribute. */
bool tc_h5_attr_exists(const char *file, const char *object, const char *attr);
/* Reads a string attribute into buf. */
void tc_h5_attr_str(const char *file, const char *object, const char *attr, char *buf, size_t n);
/* True if the file has the dataset or group. */
int tc_h5_exists(const char *file, const char *path);

/* The tests' shared tiny model config: vocab 7, d_model 8, 2 heads, 2 layers, d_ff 16, max_len 16, causal, encoding
 * `pos` (the rest as rg_model_config_default). A test sets only what it varies. */
rg_model_config tc_tiny_config(rg_pos_kind pos);
/* A model of cfg (built with seed 3) whose every parameter is then drawn N(0, std) from an RNG seeded (rng_seed, 0):
 * weights far from the 0.02 init, so that attention and positions matter. Fails the test on a build error. */
rg_model *tc_model_randn(const rg_model_config *cfg, uint64_t rng_seed, double std);
/* A right-padded batch [nb, nt] of row lengths len[b] from an RNG seeded (rng_seed, 0): tokens in [0, vocab) (0 on
 * padding), targets in [0, vocab) on about 3/4 of the real positions and -100 elsewhere. */
void tc_padded_batch(uint64_t rng_seed, int vocab, int nb, int nt, const int *len, int32_t *tokens, int32_t *targets);

/* Reference-model fixtures (tests/fixtures/model_*.h5, layout in tests/fixtures/README.md). */
/* The model config stored in a fixture's root attributes (the encoding and RoPE extension parsed from the string
 * attributes pos_encoding and rope_ext; fails the test if they do not parse). */
rg_model_config tc_fx_config(const char *file);
/* A model built from cfg (NULL: the fixture's own, tc_fx_config) with the fixture's parameters: each dataset
 * /params/<registry name>, cast to rg_real; fails the test on a missing dataset or a shape that differs. */
rg_model *tc_fx_model(const char *file, const rg_model_config *cfg);

#endif
