/* test_ckpt_crafted.c: crafted checkpoints (HDF5 metadata a fuzzer would not reach), generated here in C with HDF5 (nothing committed, no Python)
 * and re-sealed (rg_checkpoint_seal, the digest of docs/checkpoint.md), so that the content reaches the HDF5 reader
 * process: datasets without their storage (no chunk, one chunk of two, unallocated contiguous), a damaged chunk key
 * (the silent-zeros class `make fuzz` found: HDF5 read the fill value), huge declared sizes (a vocabulary of 2^24
 * with sparse datasets, a parameter count over the limit, a sparse 8 GiB file), and the reader process itself
 * crashing, spinning, exiting or probing its limits (test hook). Each must be a clean error naming the file; the
 * train_order cases (an empty /run task, /optim step mismatch, ...) are in test_train_order_input.c. */
#include "ckpt_helpers.h"
#include "io/guard.h"
#include "io/h5_image.h"

#include <fcntl.h>

static char g_ref[512];

/* Replaces float32 dataset `name` of f by one of shape dims, chunked as chunk (NULL: contiguous, allocated late),
 * Fletcher-32 when chunked, whose first `rows_written` rows (0: none) are written. */
static void replace_dataset(hid_t f, const char *name, const hsize_t *dims, const hsize_t *chunk, hsize_t rows_written)
{
    if (H5Lexists(f, name, H5P_DEFAULT) > 0) assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hid_t s = H5Screate_simple(2, dims, NULL), p = H5Pcreate(H5P_DATASET_CREATE);
    if (chunk) {
        assert_true(H5Pset_chunk(p, 2, chunk) >= 0);
        assert_true(H5Pset_fletcher32(p) >= 0);
    } else {
        assert_true(H5Pset_alloc_time(p, H5D_ALLOC_TIME_LATE) >= 0);
    }
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
    assert_true(d >= 0);
    if (rows_written) {
        hsize_t start[2] = {0, 0}, count[2] = {rows_written, dims[1]};
        float *v = calloc((size_t)(rows_written * dims[1]), sizeof *v);
        hid_t ms = H5Screate_simple(2, count, NULL);
        H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count, NULL);
        for (hsize_t i = 0; i < rows_written * dims[1]; i++) v[i] = 0.5f;
        assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, s, H5P_DEFAULT, v) >= 0);
        H5Sclose(ms);
        free(v);
    }
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
}

static void edit_lm_head(const char *name, const hsize_t *chunk, hsize_t rows, char *path, size_t n)
{
    hid_t f = open_copy(g_ref, path, n, name);
    replace_dataset(f, "/params/lm_head.weight", (const hsize_t[]){11, 16}, chunk, rows);
    close_edit(f, path);
}

static void test_datasets_without_storage(void **state)
{
    char p[600];
    edit_lm_head("nochunk.h5", (const hsize_t[]){11, 16}, 0, p, sizeof p);
    expect_load_error(p, RG_ERR_FORMAT, "dataset /params/lm_head.weight: 0 of its 1 chunks are allocated", NULL);
    edit_lm_head("halfchunk.h5", (const hsize_t[]){6, 16}, 6, p, sizeof p);
    expect_load_error(p, RG_ERR_FORMAT, "dataset /params/lm_head.weight: 1 of its 2 chunks are allocated", NULL);
    edit_lm_head("contiguous.h5", NULL, 0, p, sizeof p);
    expect_load_error(p, RG_ERR_FORMAT, "dataset /params/lm_head.weight: it has 0 bytes of storage for 704", NULL);
    /* with every chunk written, the same edit loads (the check is not a refusal of chunked files) */
    edit_lm_head("twochunks.h5", (const hsize_t[]){6, 16}, 11, p, sizeof p);
    rg_model *m = new_model(3);
    if (rg_checkpoint_load(p, m, NULL, NULL) != RG_OK) fail_msg("%s", rg_last_error());
    rg_tensor *w = rg_params_find(&m->params, "lm_head.weight");
    assert_true(w && w->data[0] == 0.5f && w->data[w->numel - 1] == 0.5f);
    rg_model_free(m);
}

/* The chunk B-tree key of /params/lm_head.weight: the node (HDF5's v1 "TREE", type 1) whose child is its chunk;
 * its first key's last offset (the element dimension) is changed, as `make fuzz` mutation 202 did: H5Dread then
 * found no chunk and returned the fill value, zeros, with exit status 0. */
static void test_damaged_chunk_key(void **state)
{
    char p[600];
    path_in(p, sizeof p, "chunkkey.h5");
    copy_file(g_ref, p);
    hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/params/lm_head.weight", H5P_DEFAULT);
    hsize_t off[2] = {0, 0}, size = 0;
    unsigned mask;
    haddr_t addr = HADDR_UNDEF;
    assert_true(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    FILE *fp = fopen(p, "r+b");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    unsigned char *b = malloc((size_t)n);
    fseek(fp, 0, SEEK_SET);
    assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
    long at = -1;
    /* node: "TREE", type, level, entries (2), siblings (2 x 8), key 0 (size 4, mask 4, 3 offsets x 8), child 0 */
    for (long i = RG_GUARD_BLOCK; i + 64 < n && at < 0; i++) {
        uint64_t child;
        memcpy(&child, b + i + 56, 8);
        if (memcmp(b + i, "TREE", 4) == 0 && b[i + 4] == 1 && child == addr) at = i + 52;
    }
    if (at < 0) fail_msg("no chunk B-tree node with child %llu", (unsigned long long)addr);
    b[at] ^= 0xf5;
    fseek(fp, 0, SEEK_SET);
    assert_int_equal(fwrite(b, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    free(b);
    assert_int_equal(rg_checkpoint_seal(p), RG_OK);
    expect_load_error(p, RG_ERR_FORMAT, "dataset /params/lm_head.weight: its chunk 0 cannot be read as stored", NULL);
}

static long max_rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static void test_huge_declared_sizes(void **state)
{
    /* vocab 2^24 with matching sparse datasets: refused by read_config, before any model of 2 x 2^28 weights */
    char p[600];
    hid_t f = open_copy(g_ref, p, sizeof p, "vocab24.h5");
    int32_t v = 1 << 24;
    put_attr(f, "/config", "vocab_size", H5T_STD_I32LE, &v);
    replace_dataset(f, "/params/tok_emb.weight", (const hsize_t[]){1u << 24, 16}, (const hsize_t[]){1u << 16, 16}, 0);
    replace_dataset(f, "/params/lm_head.weight", (const hsize_t[]){1u << 24, 16}, (const hsize_t[]){1u << 16, 16}, 0);
    close_edit(f, p);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(st.st_size < (1 << 20)); /* a small file */
    long before = max_rss_kb();
    rg_model_config c;
    rg_status s = rg_checkpoint_read_config(p, &c, NULL);
    assert_int_equal(s, RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "dataset /params/tok_emb.weight: 0 of its 256 chunks are allocated");
    assert_true(max_rss_kb() - before < 100 * 1024); /* nothing of its declared 1 GiB was allocated here */

    /* a parameter count over the reader's limit: refused before the model is built */
    rg_checkpoint_set_max_params(1000);
    s = rg_checkpoint_read_config(g_ref, &c, NULL);
    rg_checkpoint_set_max_params(0);
    assert_int_equal(s, RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "parameters, more than the 1000 this reader accepts");

    /* a sparse 8 GiB file: refused by its size before a byte is read */
    path_in(p, sizeof p, "sparse.h5");
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)8 << 30), 0);
    close(fd);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    s = rg_checkpoint_read_config(p, &c, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(s, RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "the file has 8589934592 bytes, more than the");
    assert_true((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec) < 1.0);
    unlink(p);
}

static void hook_segv(void) { raise(SIGSEGV); }
static void hook_exit(void) { _exit(7); }
static void hook_spin(void)
{
    struct rlimit r = {1, 2};
    setrlimit(RLIMIT_CPU, &r);
    for (volatile unsigned long i = 0;; i++) {}
}
/* exit 40 + (address space limited ? 0 : 1) + (stdin, stdout or stderr open ? 2 : 0) */
static void hook_limits(void)
{
    struct rlimit r;
    bool as = getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY;
    bool open_std = fcntl(0, F_GETFD) != -1 || fcntl(1, F_GETFD) != -1 || fcntl(2, F_GETFD) != -1;
    _exit(40 + (as ? 0 : 1) + (open_std ? 2 : 0));
}

static void test_reader_process_failures(void **state)
{
    static const struct {
        void (*hook)(void);
        const char *says;
    } cases[] = {
        {hook_segv, "corrupt file: reading it crashed the HDF5 reader process (signal 11: Segmentation fault)"},
        {hook_exit, "the HDF5 reader process ended (exit status 7) before it was done"},
        {hook_spin, "used more than the 60 s of CPU time of the HDF5 reader process"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rg_h5i_test_hook_child = cases[i].hook;
        rg_model_config c;
        rg_status s = rg_checkpoint_read_config(g_ref, &c, NULL);
        rg_h5i_test_hook_child = NULL;
        assert_int_equal(s, RG_ERR_FORMAT);
        assert_contains(rg_last_error(), g_ref);
        assert_contains(rg_last_error(), cases[i].says);
    }
    /* the child's limits: no standard descriptors, and (outside ASan, which maps terabytes) an address space limit */
    rg_h5i_test_hook_child = hook_limits;
    rg_model_config c;
    rg_status s = rg_checkpoint_read_config(g_ref, &c, NULL);
    rg_h5i_test_hook_child = NULL;
    assert_int_equal(s, RG_ERR_FORMAT);
#if defined(__SANITIZE_ADDRESS__)
    assert_contains(rg_last_error(), "exit status 41");
#else
    assert_contains(rg_last_error(), "exit status 40");
#endif
    /* and the same file loads without the hook (the parent is fine after each failure) */
    assert_int_equal(rg_checkpoint_read_config(g_ref, &c, NULL), RG_OK);
}

static int group_setup(void **state)
{
    if (setup(state)) return -1;
    save_reference(g_ref, sizeof g_ref, "ref.h5");
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datasets_without_storage),
        cmocka_unit_test(test_damaged_chunk_key),
        cmocka_unit_test(test_huge_declared_sizes),
        cmocka_unit_test(test_reader_process_failures),
    };
    return cmocka_run_group_tests_name("crafted checkpoints", tests, group_setup, teardown);
}
