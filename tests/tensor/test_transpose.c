/* test_transpose.c (float32): rg_transpose_block (src/tensor/transpose.h), attention's per-head K^T / V^T, equals the
 * plain loop bit for bit (a copy: every element, NaN payloads and -0 included) on shapes with and without whole
 * 8 x 8 blocks, strided source and destination rows, and leaves the destination's padding untouched. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/transpose.h"

typedef struct {
    int rows, cols, lds, ldd;
} shape;

static const shape SHAPES[] = {
    {1, 1, 1, 1},   {7, 7, 7, 7},    {8, 8, 8, 8},    {9, 8, 8, 9},    {8, 9, 9, 8},    {34, 16, 64, 34},
    {33, 16, 64, 33}, {5, 16, 64, 5}, {16, 24, 40, 19}, {17, 23, 25, 20}, {130, 32, 256, 131}, {3, 17, 17, 3},
};

static void test_shapes(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof SHAPES / sizeof *SHAPES; t++) {
        const shape *s = &SHAPES[t];
        size_t ns = (size_t)s->rows * s->lds, nd = (size_t)s->cols * s->ldd;
        rg_real *src = malloc(ns * sizeof *src), *got = malloc(nd * sizeof *got), *want = malloc(nd * sizeof *want);
        assert_non_null(src), assert_non_null(got), assert_non_null(want);
        for (size_t i = 0; i < ns; i++) {
            uint32_t w = 0x3f800000u + (uint32_t)i * 2654435761u % 0x800000u;
            if (i % 97 == 5) w = 0x7fc01234u;  /* a NaN with a payload */
            if (i % 89 == 3) w = 0x80000000u;  /* -0 */
            memcpy(&src[i], &w, sizeof w);
        }
        memset(got, 0xAB, nd * sizeof *got);
        memset(want, 0xAB, nd * sizeof *want);
        rg_transpose_block(got, s->ldd, src, s->lds, s->rows, s->cols, true);
        rg_transpose_block(want, s->ldd, src, s->lds, s->rows, s->cols, false);
        if (memcmp(got, want, nd * sizeof *got) != 0)
            fail_msg("rg_transpose %d x %d (lds %d, ldd %d) differs from the plain loop", s->rows, s->cols, s->lds,
                     s->ldd);
        for (int c = 0; c < s->cols; c++)
            for (int r = 0; r < s->rows; r++)
                assert_memory_equal(&want[(size_t)c * s->ldd + r], &src[(size_t)r * s->lds + c], sizeof *src);
        free(src), free(got), free(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
