/* test_h5.c: the HDF5 layer (src/io/h5.h), the atomic write (src/io/atomic.h) and the guards (src/io/guard.h):
 * typed attributes read as 64-bit and range-checked, strings of every kind h5py and HDF5 write, dataset dtype and
 * shape checks, the memory image round trip, CRC-32 against zlib's test vector, the digest block, the HDF5 reader
 * process (src/io/h5_image.h). */
#include "common.h"
#include "io/atomic.h"
#include "io/guard.h"
#include "io/h5.h"
#include "io/h5_image.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[64];
static const rg_h5_src SRC = {"test file", "mem.h5"};

static void assert_err(rg_status got, rg_status want, const char *needle)
{
    if (got != want) fail_msg("status %d, want %d (%s)", (int)got, (int)want, rg_last_error());
    if (needle && !strstr(rg_last_error(), needle)) fail_msg("message '%s' lacks '%s'", rg_last_error(), needle);
}

/* A scalar attribute of the given file type holding *v (memory type mt). */
static void put(hid_t loc, const char *name, hid_t ft, hid_t mt, const void *v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, ft, s, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, mt, v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
}

static void test_integers(void **state)
{
    rg_h5_quiet q;
    rg_h5_quiet_begin(&q);
    hid_t f = rg_h5_create_memory(H5P_DEFAULT);
    assert_true(f >= 0);
    int64_t big = ((int64_t)1 << 32) + 55;
    uint64_t huge = UINT64_MAX - 1;
    int16_t small = -7;
    double fl = 2.5;
    put(f, "big", H5T_STD_I64LE, H5T_NATIVE_INT64, &big);
    put(f, "huge", H5T_STD_U64LE, H5T_NATIVE_UINT64, &huge);
    put(f, "small", H5T_STD_I16BE, H5T_NATIVE_INT16, &small);
    put(f, "float", H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, &fl);
    int64_t v = 0;
    assert_err(rg_h5_read_int(&SRC, f, "/", "big", INT64_MIN, INT64_MAX, &v), RG_OK, NULL);
    assert_true(v == big); /* 64-bit read: no truncation to 55 */
    assert_err(rg_h5_read_int(&SRC, f, "/", "big", 0, INT32_MAX, &v), RG_ERR_FORMAT,
               "test file mem.h5: attribute 'big' on / = 4294967351 is outside 0..2147483647");
    assert_err(rg_h5_read_int(&SRC, f, "/", "huge", INT64_MIN, INT64_MAX, &v), RG_ERR_FORMAT,
               "= 18446744073709551614 is outside"); /* never wrapped to a negative value */
    uint64_t u = 0;
    assert_err(rg_h5_read_u64(&SRC, f, "/", "huge", &u), RG_OK, NULL);
    assert_true(u == huge);
    assert_err(rg_h5_read_u64(&SRC, f, "/", "small", &u), RG_ERR_FORMAT, "'small' on / = -7 is negative");
    assert_err(rg_h5_read_int(&SRC, f, "/", "small", -10, 10, &v), RG_OK, NULL); /* big-endian int16 */
    assert_int_equal(v, -7);
    assert_err(rg_h5_read_int(&SRC, f, "/", "float", 0, 10, &v), RG_ERR_FORMAT, "is float32, expected an integer");
    assert_err(rg_h5_read_int(&SRC, f, "/", "nope", 0, 10, &v), RG_ERR_FORMAT, "missing attribute 'nope' on /");
    double d = 0;
    assert_err(rg_h5_read_f64(&SRC, f, "/", "float", &d), RG_OK, NULL);
    assert_true(d == 2.5);
    assert_err(rg_h5_read_f64(&SRC, f, "/", "big", &d), RG_ERR_FORMAT, "is int64, expected a float");
    assert_int_equal(rg_h5_attr_kind(f, "big"), RG_H5_INT);
    assert_int_equal(rg_h5_attr_kind(f, "float"), RG_H5_FLOAT);
    assert_int_equal(rg_h5_attr_kind(f, "nope"), RG_H5_MISSING);
    /* two values where one is expected */
    int64_t two[2] = {1, 2};
    assert_true(rg_h5_write_ints(f, "pair", H5T_STD_I32LE, two, 2) >= 0);
    assert_err(rg_h5_read_int(&SRC, f, "/", "pair", 0, 10, &v), RG_ERR_FORMAT, "has 2 values, expected 1");
    assert_int_equal(rg_h5_attr_kind(f, "pair"), RG_H5_OTHER);
    assert_true(rg_h5_close_file(f) >= 0);
    rg_h5_quiet_end(&q);
}

static void put_str(hid_t loc, const char *name, const char *v, bool vlen, H5T_cset_t cset, H5T_str_t pad,
                    size_t size)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, vlen ? H5T_VARIABLE : size);
    H5Tset_cset(t, cset);
    if (!vlen) H5Tset_strpad(t, pad);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, vlen ? (const void *)&v : (const void *)v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

static void test_strings(void **state)
{
    rg_h5_quiet q;
    rg_h5_quiet_begin(&q);
    hid_t f = rg_h5_create_memory(H5P_DEFAULT);
    size_t long_n = 5000;
    char *long_s = malloc(long_n + 1);
    for (size_t i = 0; i < long_n; i++) long_s[i] = (char)('a' + i % 26);
    long_s[long_n] = 0;
    const char *utf8 = "\xce\xb1-rope \xe2\x9c\x93"; /* "α-rope ✓" */
    put_str(f, "vlen_utf8", utf8, true, H5T_CSET_UTF8, 0, 0);          /* h5py: attrs[k] = "α-rope ✓" */
    put_str(f, "vlen_ascii", "rope", true, H5T_CSET_ASCII, 0, 0);
    put_str(f, "vlen_long", long_s, true, H5T_CSET_UTF8, 0, 0);
    put_str(f, "nullpad", "rope\0\0\0", false, H5T_CSET_ASCII, H5T_STR_NULLPAD, 7); /* numpy bytes: np.bytes_ */
    put_str(f, "spacepad", "rope   ", false, H5T_CSET_ASCII, H5T_STR_SPACEPAD, 7);    /* Fortran style */
    put_str(f, "exact", "rope", false, H5T_CSET_ASCII, H5T_STR_NULLPAD, 4);           /* no terminator at all */
    put_str(f, "inner_nul", "ro\0pe", false, H5T_CSET_ASCII, H5T_STR_NULLPAD, 5);
    put_str(f, "bad_utf8", "\xc3(", true, H5T_CSET_UTF8, 0, 0);
    assert_true(rg_h5_write_str(f, "written_long", long_s) >= 0);
    assert_true(rg_h5_write_str(f, "written_utf8", utf8) >= 0);
    struct {
        const char *name, *want;
    } ok[] = {{"vlen_utf8", utf8}, {"vlen_ascii", "rope"}, {"vlen_long", long_s}, {"nullpad", "rope"},
              {"spacepad", "rope"}, {"exact", "rope"}, {"written_long", long_s}, {"written_utf8", utf8}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *s = NULL;
        if (rg_h5_read_str(&SRC, f, "/", ok[i].name, &s) != RG_OK) fail_msg("%s: %s", ok[i].name, rg_last_error());
        assert_string_equal(s, ok[i].want);
        free(s);
    }
    /* the written UTF-8 string says so (h5py then returns str) */
    hid_t a = H5Aopen(f, "written_utf8", H5P_DEFAULT), t = H5Aget_type(a);
    assert_int_equal(H5Tget_cset(t), H5T_CSET_UTF8);
    H5Tclose(t);
    H5Aclose(a);
    char *s = NULL;
    assert_err(rg_h5_read_str(&SRC, f, "/", "inner_nul", &s), RG_ERR_FORMAT, "holds a NUL byte");
    assert_err(rg_h5_read_str(&SRC, f, "/", "bad_utf8", &s), RG_ERR_FORMAT, "not valid UTF-8");
    char buf[8];
    assert_err(rg_h5_read_str_buf(&SRC, f, "/", "vlen_long", buf, sizeof buf), RG_ERR_FORMAT,
               "has 5000 characters, at most 7 fit");
    assert_err(rg_h5_read_str_buf(&SRC, f, "/", "nullpad", buf, sizeof buf), RG_OK, NULL);
    assert_string_equal(buf, "rope");
    free(long_s);
    rg_h5_close_file(f);
    rg_h5_quiet_end(&q);
}

static void test_datasets_and_image(void **state)
{
    rg_h5_quiet q;
    rg_h5_quiet_begin(&q);
    hid_t f = rg_h5_create_memory(H5P_DEFAULT);
    float x[6] = {1, 2, 3, 4, 5, 6};
    double xd[6] = {1, 2, 3, 4, 5, 6};
    int32_t xi[6] = {1, 2, 3, 4, 5, 6};
    hsize_t dims[2] = {2, 3};
    assert_true(rg_h5_write_dataset(f, "f32", RG_H5_FLOAT32, 2, dims, x, RG_H5_CHECKSUM) >= 0);
    assert_true(rg_h5_write_dataset(f, "f64", RG_H5_FLOAT64, 2, dims, xd, 0) >= 0);
    assert_true(rg_h5_write_dataset(f, "i32", RG_H5_INT32, 2, dims, xi, RG_H5_COMPRESS | RG_H5_NO_TIMES) >= 0);
    hid_t g = rg_h5_create_group(f, "grp");
    assert_true(g >= 0);
    H5Gclose(g);
    size_t n = 0;
    unsigned char *img = rg_h5_memory_image(f, 0, &n);
    assert_non_null(img);
    assert_true(rg_h5_close_file(f) >= 0);
    /* reopened from the image */
    assert_err(rg_h5_open_image(&SRC, img, n, &f), RG_OK, NULL);
    float y[6] = {0};
    assert_err(rg_h5_read_dataset(&SRC, f, "", "f32", RG_H5_FLOAT32, 2, dims, y), RG_OK, NULL);
    assert_memory_equal(x, y, sizeof x);
    hsize_t wrong[2] = {3, 2};
    assert_err(rg_h5_read_dataset(&SRC, f, "", "f32", RG_H5_FLOAT32, 2, wrong, y), RG_ERR_SHAPE,
               "dataset /f32 has shape [2, 3], expected [3, 2]");
    assert_err(rg_h5_read_dataset(&SRC, f, "", "f64", RG_H5_FLOAT32, 2, dims, y), RG_ERR_FORMAT,
               "dataset /f64 has dtype float64, expected float32");
    assert_err(rg_h5_read_dataset(&SRC, f, "", "f32", RG_H5_INT32, 2, dims, xi), RG_ERR_FORMAT,
               "has dtype float32, expected int32");
    assert_err(rg_h5_read_dataset(&SRC, f, "", "nope", RG_H5_INT32, 2, dims, xi), RG_ERR_FORMAT,
               "missing dataset /nope");
    assert_err(rg_h5_read_dataset(&SRC, f, "", "grp", RG_H5_INT32, 2, dims, xi), RG_ERR_FORMAT,
               "/grp is not a dataset");
    int nd;
    hsize_t got[4];
    assert_err(rg_h5_dataset_shape(&SRC, f, "", "i32", RG_H5_INT32, 4, &nd, got), RG_OK, NULL);
    assert_int_equal(nd, 2);
    assert_true(got[0] == 2 && got[1] == 3);
    rg_h5_names l;
    assert_err(rg_h5_list_links(&SRC, f, "/", 10, &l), RG_OK, NULL);
    assert_int_equal(l.n, 4);
    rg_h5_names_free(&l);
    assert_err(rg_h5_list_links(&SRC, f, "/", 3, &l), RG_ERR_FORMAT, "/ has more than 3 members");
    rg_h5_close_file(f);
    /* not HDF5 */
    memset(img, 'x', 64);
    assert_err(rg_h5_open_image(&SRC, img, 64, &f), RG_ERR_FORMAT, "not an HDF5 file");
    free(img);
    rg_h5_quiet_end(&q);
}

static void test_crc32_and_digest(void **state)
{
    assert_int_equal(rg_crc32(0, "123456789", 9), 0xCBF43926u); /* zlib.crc32(b"123456789") */
    assert_int_equal(rg_crc32(rg_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    size_t n = 2048;
    unsigned char *buf = calloc(n, 1);
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    memcpy(buf + 512, sig, 8);
    for (size_t i = 520; i < n; i++) buf[i] = (unsigned char)(i * 7);
    rg_guard_seal(buf, n);
    bool sealed = false;
    assert_err(rg_guard_verify(&SRC, buf, n, &sealed), RG_OK, NULL);
    assert_true(sealed);
    /* every single-byte change of the block and of the body is caught */
    for (size_t i = 0; i < n; i++) {
        buf[i] ^= 0x40;
        rg_status st = rg_guard_verify(&SRC, buf, n, &sealed);
        if (st != RG_ERR_FORMAT) fail_msg("byte %zu changed: status %d", i, (int)st);
        buf[i] ^= 0x40;
    }
    assert_err(rg_guard_verify(&SRC, buf, n - 1, &sealed), RG_ERR_FORMAT, "(truncated or extended)");
    /* a file without a block: accepted, not sealed */
    assert_err(rg_guard_verify(&SRC, buf + 512, n - 512, &sealed), RG_OK, NULL);
    assert_false(sealed);
    free(buf);
}

static void crash_hook(void) { raise(SIGSEGV); }
static void hang_hook(void) { for (;;) pause(); }

/* The HDF5 reader process (h5_image.h): a file parsed there reads back through the image; a crash or a hang of the
 * child (test hook) is a clean error naming the file. */
static void test_reader_process(void **state)
{
    rg_h5_quiet q;
    rg_h5_quiet_begin(&q);
    hid_t f = rg_h5_create_memory(H5P_DEFAULT);
    assert_true(f >= 0);
    int64_t big = ((int64_t)1 << 40) + 3;
    put(f, "big", H5T_STD_I64LE, H5T_NATIVE_INT64, &big);
    assert_true(rg_h5_write_str(f, "name", "rope") >= 0);
    size_t n;
    unsigned char *img = rg_h5_memory_image(f, 0, &n);
    rg_h5_close_file(f);
    rg_h5_quiet_end(&q);
    char p[256];
    snprintf(p, sizeof p, "%s/img.h5", g_dir);
    assert_err(rg_atomic_write("test file", p, img, n), RG_OK, NULL);
    free(img);
    rg_h5_src src = {"test file", p};
    rg_h5_image_opts o = {NULL, 1 << 20, 1 << 20, 100, 1, false};
    rg_h5_image *im;
    assert_err(rg_h5_image_load(&src, &o, &im), RG_OK, NULL);
    int64_t v = 0;
    char s[8];
    assert_err(rg_h5i_read_int(&src, rg_h5_image_root(im), "/", "big", INT64_MIN, INT64_MAX, &v), RG_OK, NULL);
    assert_true(v == big);
    assert_err(rg_h5i_read_str_buf(&src, rg_h5_image_root(im), "/", "name", s, sizeof s), RG_OK, NULL);
    assert_string_equal(s, "rope");
    assert_err(rg_h5i_read_int(&src, rg_h5_image_root(im), "/", "name", 0, 1, &v), RG_ERR_FORMAT,
               "attribute 'name' on / is a string, expected an integer");
    rg_h5_image_free(im);
    o.max_file_bytes = n - 1;
    assert_err(rg_h5_image_load(&src, &o, &im), RG_ERR_FORMAT, "more than the");
    o.max_file_bytes = 1 << 20;
    rg_h5i_test_hook_child = crash_hook;
    assert_err(rg_h5_image_load(&src, &o, &im), RG_ERR_FORMAT, "corrupt file: reading it crashed the HDF5 reader");
    rg_h5i_test_hook_child = hang_hook;
    assert_err(rg_h5_image_load(&src, &o, &im), RG_ERR_FORMAT, "did not finish within 2 s in the HDF5 reader process");
    rg_h5i_test_hook_child = NULL;
    assert_true(strstr(rg_last_error(), p) != NULL);
    unlink(p);
}

static int g_hook_calls;
static int fail_hook(const char *tmp) { return ++g_hook_calls; }

static void test_atomic_write(void **state)
{
    char p[256];
    snprintf(p, sizeof p, "%s/a.bin", g_dir);
    assert_err(rg_atomic_write("thing", p, "old", 3), RG_OK, NULL);
    rg_atomic_test_hook_before_rename = fail_hook;
    assert_err(rg_atomic_write("thing", p, "new!", 4), RG_ERR_IO, "thing");
    rg_atomic_test_hook_before_rename = NULL;
    assert_int_equal(g_hook_calls, 1);
    FILE *f = fopen(p, "rb");
    char buf[8] = {0};
    assert_int_equal(fread(buf, 1, sizeof buf, f), 3);
    fclose(f);
    assert_string_equal(buf, "old");
    char q[300];
    snprintf(q, sizeof q, "%s/missing/a.bin", g_dir);
    assert_err(rg_atomic_write("thing", q, "x", 1), RG_ERR_IO, "No such file or directory");
    /* nothing but a.bin in the folder */
    DIR *d = opendir(g_dir);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) entries += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, 1);
    unlink(p);
}

static int setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/rg_h5_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) { return rmdir(g_dir); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),          cmocka_unit_test(test_strings),
        cmocka_unit_test(test_datasets_and_image), cmocka_unit_test(test_crc32_and_digest),
        cmocka_unit_test(test_reader_process),             cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests_name("h5", tests, setup, teardown);
}
