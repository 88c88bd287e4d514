/* test_ckpt_corrupt.c: every kind of bad checkpoint, one table run by one loop (name, mutation, expected status and
 * message parts): files that are not checkpoints or not whole, wrong datasets, values out of range, missing or
 * wrongly typed structure. Each load must fail with its message and change nothing. Then the digest block (edits
 * refused until sealed, files without a block) and strings as h5py writes them. */
#include "ckpt_helpers.h"

/* ---- the corruption and validation cases: one table, one loop. Each mutation edits a copy of the reference
 * checkpoint with HDF5 (then the copy is sealed again: an edit made on purpose, so that the check under test is
 * reached, not the digest); the load must fail with the status and a message containing `msg`, and change
 * nothing. */

static void m_nan_weight(hid_t f) { poke(f, "/params/ln_f.weight", 3, NAN); }
static void m_inf_moment(hid_t f) { poke(f, "/optim/exp_avg/tok_emb.weight", 0, -INFINITY); }
static void m_negative_v(hid_t f) { poke(f, "/optim/exp_avg_sq/lm_head.weight", 5, -1e-3); }
static void m_beta1_negative(hid_t f) { put_f64(f, "/optim", "beta1", -0.1); }
static void m_beta2_one(hid_t f) { put_f64(f, "/optim", "beta2", 1.0); }
static void m_eps_negative(hid_t f) { put_f64(f, "/optim", "eps", -1e-8); }
static void m_wd_nan(hid_t f) { put_f64(f, "/optim", "weight_decay", NAN); }
static void m_lr_negative(hid_t f) { put_f64(f, "/optim", "lr_peak", -3e-3); }
static void m_min_frac(hid_t f) { put_f64(f, "/optim", "lr_min_frac", 1.5); }
static void m_step_negative(hid_t f) { put_i64(f, "/", "step", -1); }
static void m_optim_step_huge(hid_t f) { put_i64(f, "/optim", "step", (int64_t)1 << 40); }
static void m_lr_total_wraps(hid_t f) { put_i64(f, "/optim", "lr_total", ((int64_t)1 << 32) + 55); }
static void m_lr_step_negative(hid_t f) { put_i64(f, "/optim", "lr_step", -5); }
static void m_no_rng(hid_t f) { assert_true(H5Ldelete(f, "/rng", H5P_DEFAULT) >= 0); }
static void m_no_run(hid_t f) { assert_true(H5Ldelete(f, "/run", H5P_DEFAULT) >= 0); }
static void m_rng_shape(hid_t f)
{
    hsize_t d[1] = {3};
    put_dataset(f, "/rng/data", H5T_STD_U64LE, 1, d);
}
static void m_rng_dtype(hid_t f)
{
    hsize_t d[1] = {2};
    put_dataset(f, "/rng/positions", H5T_IEEE_F64LE, 1, d);
}
static void m_no_has_adamw(hid_t f) { assert_true(H5Adelete_by_name(f, "optim", "has_adamw", H5P_DEFAULT) >= 0); }
static void m_d_ff_float(hid_t f) { put_f64(f, "/config", "d_ff", 32.0); }
static void m_n_heads_zero(hid_t f) { put_i64(f, "/config", "n_heads", 0); }
static void m_run_attr_compound(hid_t f)
{
    hsize_t two = 2;
    hid_t s = H5Screate_simple(1, &two, NULL);
    hid_t a = H5Acreate_by_name(f, "/run", "pair", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int32_t v[2] = {1, 2};
    H5Awrite(a, H5T_NATIVE_INT32, v);
    H5Aclose(a);
    H5Sclose(s);
}

/* Whole-file mutations of the copy at `path` (not sealed: the file itself is what is wrong). */
static void cut_to(const char *path, long size) { assert_int_equal(truncate(path, size), 0); }
static long file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}
static void f_empty(const char *p) { cut_to(p, 0); }
static void f_cut_8(const char *p) { cut_to(p, 8); }
static void f_cut_300(const char *p) { cut_to(p, 300); }
static void f_cut_700(const char *p) { cut_to(p, 700); }
static void f_cut_half(const char *p) { cut_to(p, file_size(p) / 2); }
static void f_cut_last(const char *p) { cut_to(p, file_size(p) - 1); }
static void f_text(const char *p)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    for (int i = 0; i < 100; i++) fprintf(f, "this is not an HDF5 file, line %d\n", i);
    fclose(f);
}
static void f_missing(const char *p) { assert_int_equal(unlink(p), 0); }
static void f_folder(const char *p)
{
    assert_int_equal(unlink(p), 0);
    assert_int_equal(mkdir(p, 0755), 0);
}
/* An HDF5 file of another program: /params only, no root attributes. */
static void f_foreign(const char *p)
{
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gcreate2(f, "params", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {11, 16};
    put_dataset(g, "tok_emb.weight", H5T_IEEE_F32LE, 2, dims);
    H5Gclose(g);
    H5Fclose(f);
}
/* The same with a format attribute of another program. */
static void f_keras(const char *p)
{
    f_foreign(p);
    hid_t f = open_rw(p);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 8);
    put_attr(f, "/", "format", t, "keras\0\0\0");
    H5Tclose(t);
    H5Fclose(f);
}

static void m_version_2(hid_t f)
{
    int32_t v = 2;
    put_attr(f, "/", "format_version", H5T_NATIVE_INT32, &v);
}
static void m_shape(hid_t f)
{
    hsize_t d[2] = {32, 15};
    put_dataset(f, "/params/blocks.1.mlp.fc1.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_shape_moment(hid_t f)
{
    hsize_t d[1] = {17};
    put_dataset(f, "/optim/exp_avg_sq/ln_f.bias", H5T_IEEE_F32LE, 1, d);
}
static void m_float64(hid_t f)
{
    hsize_t d[2] = {11, 16};
    put_dataset(f, "/params/lm_head.weight", H5T_IEEE_F64LE, 2, d);
}
static void m_int32(hid_t f)
{
    hsize_t d[2] = {11, 16};
    put_dataset(f, "/params/lm_head.weight", H5T_STD_I32LE, 2, d);
}
static void m_no_param(hid_t f) { assert_true(H5Ldelete(f, "/params/blocks.0.attn.v_proj.bias", H5P_DEFAULT) >= 0); }
static void m_no_moment(hid_t f) { assert_true(H5Ldelete(f, "/optim/exp_avg/tok_emb.weight", H5P_DEFAULT) >= 0); }
static void m_no_d_ff(hid_t f) { assert_true(H5Adelete_by_name(f, "config", "d_ff", H5P_DEFAULT) >= 0); }
static void m_extra_param(hid_t f)
{
    hsize_t d[2] = {16, 16};
    put_dataset(f, "/params/pos_emb.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_extra_layer(hid_t f)
{
    hsize_t d[2] = {16, 16};
    put_dataset(f, "/params/blocks.2.attn.q_proj.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_extra_moment(hid_t f)
{
    hsize_t d[2] = {16, 16};
    put_dataset(f, "/optim/exp_avg/pos_emb.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_n_layers_4096(hid_t f) { put_attr(f, "/config", "n_layers", H5T_NATIVE_INT32, &(int32_t){4096}); }
static void m_vocab(hid_t f) { put_attr(f, "/config", "vocab_size", H5T_NATIVE_INT32, &(int32_t){12}); }
static void m_rng_even(hid_t f)
{
    hid_t d = H5Dopen2(f, "/rng/data", H5P_DEFAULT);
    uint64_t v[2] = {5, 4};
    assert_true(H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
}

/* One case: an HDF5 edit of a copy of the reference (sealed again afterwards) or a whole-file mutation of the
 * copy; the status and up to two message parts; flags: */
enum {
    OPTIM_ONLY = 1, /* only a load with an optimizer reads it (a load without one succeeds) */
    STATE = 2       /* in the config or the run state: rg_checkpoint_read_config fails the same way */
};
static const struct {
    const char *name;
    void (*edit)(hid_t f);
    void (*file)(const char *path);
    int flags;
    rg_status code;
    const char *msg, *msg2;
} CORRUPTIONS[] = {
    /* files that are not checkpoints, or not whole */
    {"empty", NULL, f_empty, STATE, RG_ERR_FORMAT, "empty file", NULL},
    {"cut at 8 bytes", NULL, f_cut_8, STATE, RG_ERR_FORMAT, "not an HDF5 file", NULL},
    {"cut at 300 bytes", NULL, f_cut_300, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"cut at 700 bytes", NULL, f_cut_700, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"cut at half", NULL, f_cut_half, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"last byte cut", NULL, f_cut_last, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"text file", NULL, f_text, STATE, RG_ERR_FORMAT, "not an HDF5 file", NULL},
    {"missing file", NULL, f_missing, STATE, RG_ERR_IO, "No such file", NULL},
    {"a folder", NULL, f_folder, STATE, RG_ERR_IO, "not a regular file", NULL},
    {"HDF5 of another program", NULL, f_foreign, STATE, RG_ERR_FORMAT, "not a ropegrad checkpoint", "another program"},
    {"format 'keras'", NULL, f_keras, STATE, RG_ERR_FORMAT, "not a ropegrad checkpoint", "'keras'"},
    {"format_version 2", m_version_2, NULL, STATE, RG_ERR_FORMAT, "format_version 2", NULL},
    /* datasets */
    {"wrong shape", m_shape, NULL, 0, RG_ERR_SHAPE, "/params/blocks.1.mlp.fc1.weight has shape [32, 15]", "[32, 16]"},
    {"wrong shape of a moment", m_shape_moment, NULL, OPTIM_ONLY, RG_ERR_SHAPE,
     "/optim/exp_avg_sq/ln_f.bias has shape [17]", "[16]"},
    {"float64 parameter", m_float64, NULL, STATE, RG_ERR_FORMAT, "/params/lm_head.weight has dtype float64", "float32"},
    {"int32 parameter", m_int32, NULL, STATE, RG_ERR_FORMAT, "/params/lm_head.weight has dtype int32", NULL},
    {"missing parameter", m_no_param, NULL, 0, RG_ERR_FORMAT, "missing dataset /params/blocks.0.attn.v_proj.bias", NULL},
    {"missing moment", m_no_moment, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "missing dataset /optim/exp_avg/tok_emb.weight", NULL},
    {"unknown parameter", m_extra_param, NULL, 0, RG_ERR_FORMAT, "unknown dataset /params/pos_emb.weight", NULL},
    {"unknown moment", m_extra_moment, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "unknown dataset /optim/exp_avg/pos_emb.weight", NULL},
    {"a third layer", m_extra_layer, NULL, STATE, RG_ERR_FORMAT, "n_layers 2, but /params has the layers of 3", NULL},
    /* values */
    {"NaN weight", m_nan_weight, NULL, 0, RG_ERR_FORMAT, "dataset /params/ln_f.weight holds nan at index 3", NULL},
    {"-inf moment", m_inf_moment, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "/optim/exp_avg/tok_emb.weight holds -inf", NULL},
    {"negative exp_avg_sq", m_negative_v, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "expected finite and >= 0", NULL},
    {"beta1 < 0", m_beta1_negative, NULL, STATE, RG_ERR_FORMAT, "attribute 'beta1' on /optim = -0.1 is outside", NULL},
    {"beta2 = 1", m_beta2_one, NULL, STATE, RG_ERR_FORMAT, "attribute 'beta2' on /optim = 1 is outside", NULL},
    {"eps < 0", m_eps_negative, NULL, STATE, RG_ERR_FORMAT, "'eps' on /optim = -1e-08", NULL},
    {"weight_decay NaN", m_wd_nan, NULL, STATE, RG_ERR_FORMAT, "'weight_decay' on /optim = nan", NULL},
    {"lr_peak < 0", m_lr_negative, NULL, STATE, RG_ERR_FORMAT, "'lr_peak' on /optim = -0.003", NULL},
    {"lr_min_frac > 1", m_min_frac, NULL, STATE, RG_ERR_FORMAT, "'lr_min_frac' on /optim = 1.5", NULL},
    {"step -1", m_step_negative, NULL, STATE, RG_ERR_FORMAT, "attribute 'step' on / = -1 is outside 0..2147483647", NULL},
    {"optimizer step 2^40", m_optim_step_huge, NULL, STATE, RG_ERR_FORMAT, "'step' on /optim = 1099511627776", NULL},
    {"lr_total 2^32+55", m_lr_total_wraps, NULL, STATE, RG_ERR_FORMAT, "'lr_total' on /optim = 4294967351 is outside", NULL},
    {"lr_step -5", m_lr_step_negative, NULL, STATE, RG_ERR_FORMAT, "'lr_step' on /optim = -5", NULL},
    {"RNG increment even", m_rng_even, NULL, STATE, RG_ERR_FORMAT, "/rng/data: increment 4 is even", NULL},
    /* structure and types */
    {"no /rng", m_no_rng, NULL, STATE, RG_ERR_FORMAT, "missing group /rng", NULL},
    {"no /run", m_no_run, NULL, STATE, RG_ERR_FORMAT, "missing group /run", NULL},
    {"/rng/data [3]", m_rng_shape, NULL, STATE, RG_ERR_SHAPE, "dataset /rng/data has shape [3], expected [2]", NULL},
    {"/rng/positions float64", m_rng_dtype, NULL, STATE, RG_ERR_FORMAT, "/rng/positions has dtype float64", "uint64"},
    {"no has_adamw", m_no_has_adamw, NULL, STATE, RG_ERR_FORMAT, "missing attribute 'has_adamw' on /optim", NULL},
    {"no d_ff", m_no_d_ff, NULL, STATE, RG_ERR_FORMAT, "missing attribute 'd_ff' on /config", NULL},
    {"d_ff float", m_d_ff_float, NULL, STATE, RG_ERR_FORMAT, "attribute 'd_ff' on /config is float64", "integer"},
    {"n_heads 0", m_n_heads_zero, NULL, STATE, RG_ERR_FORMAT, "/config: ", NULL},
    {"n_layers 4096", m_n_layers_4096, NULL, STATE, RG_ERR_FORMAT, "n_layers 4096, but /params has the layers of 2", NULL},
    {"vocab_size 12", m_vocab, NULL, STATE, RG_ERR_FORMAT, "/params/tok_emb.weight is not [12, 16]", NULL},
    {"/run attribute of 2 values", m_run_attr_compound, NULL, STATE, RG_ERR_FORMAT, "/run: attribute 'pair'", NULL},
};

static void test_corruption_table(void **state)
{
    char ref[256], p[256];
    save_reference(ref, sizeof ref, "table_ref.h5");
    for (size_t i = 0; i < sizeof CORRUPTIONS / sizeof CORRUPTIONS[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "case_%zu.h5", i);
        path_in(p, sizeof p, name);
        copy_file(ref, p);
        if (CORRUPTIONS[i].edit) {
            hid_t f = open_rw(p);
            CORRUPTIONS[i].edit(f);
            close_edit(f, p);
        } else {
            CORRUPTIONS[i].file(p);
        }
        print_message("  %-28s -> %s\n", CORRUPTIONS[i].name, CORRUPTIONS[i].msg);
        expect_load_error_opt(p, CORRUPTIONS[i].code, CORRUPTIONS[i].msg, CORRUPTIONS[i].msg2,
                              CORRUPTIONS[i].flags & OPTIM_ONLY);
        rg_model_config c;
        rg_status st = rg_checkpoint_read_config(p, &c, NULL);
        if ((CORRUPTIONS[i].flags & STATE) ? st != CORRUPTIONS[i].code : st != RG_OK)
            fail_msg("%s: read_config gives status %d (%s)", CORRUPTIONS[i].name, (int)st, rg_last_error());
        if (CORRUPTIONS[i].flags & OPTIM_ONLY) { /* the parameters alone load */
            rg_model *m = new_model(3);
            if (rg_checkpoint_load(p, m, NULL, NULL) != RG_OK) fail_msg("%s: %s", CORRUPTIONS[i].name, rg_last_error());
            rg_model_free(m);
        }
        if (CORRUPTIONS[i].file == f_folder) rmdir(p);
    }
}

/* An edit without resealing is refused by the digest; a file without the digest block still loads (probe). */
static void test_digest(void **state)
{
    char ref[256], p[256];
    save_reference(ref, sizeof ref, "dig_ref.h5");
    hid_t f = open_copy(ref, p, sizeof p, "dig_edit.h5");
    put_f64(f, "/optim", "lr_peak", 1e-3); /* a valid value: only the digest can tell */
    H5Fclose(f);
    expect_load_error(p, RG_ERR_FORMAT, "digest block records", "edited after saving");
    assert_int_equal(rg_checkpoint_seal(p), RG_OK);
    rg_model *m = new_model(4);
    rg_run_state rs;
    assert_int_equal(rg_checkpoint_load(p, m, NULL, &rs), RG_OK);
    assert_true(rs.lr.peak == 1e-3);
    /* the bytes after the block alone: an HDF5 file without digest block, as written before it existed */
    FILE *a = fopen(ref, "rb");
    path_in(p, sizeof p, "dig_bare.h5");
    FILE *b = fopen(p, "wb");
    char buf[4096];
    size_t n;
    assert_int_equal(fseek(a, 512, SEEK_SET), 0);
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, n, b);
    fclose(a);
    fclose(b);
    assert_int_equal(rg_checkpoint_load(p, m, NULL, NULL), RG_OK);
    rg_model *want = new_model(1);
    snapshot s = snap(want, NULL);
    assert_same(&s, m, NULL, "file without digest block");
    /* a damaged digest block, a truncated sealed file */
    copy_file(ref, p);
    FILE *c = fopen(p, "r+b");
    fseek(c, 3, SEEK_SET);
    fputc('X', c);
    fclose(c);
    expect_load_error(p, RG_ERR_FORMAT, "user block is not a ropegrad digest block", NULL);
    snap_free(&s);
    rg_model_free(want);
    rg_model_free(m);
}

/* Strings as h5py writes them (variable-length UTF-8), non-ASCII text, and strings longer than 127 characters. */
static void put_vlen_str(hid_t f, const char *obj, const char *name, const char *v)
{
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) H5Adelete_by_name(f, obj, name, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate_by_name(f, obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, &v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

static void test_strings(void **state)
{
    char ref[256], p[256];
    save_reference(ref, sizeof ref, "str_ref.h5");
    char long_str[600];
    memset(long_str, 'q', sizeof long_str - 1);
    long_str[sizeof long_str - 1] = 0;
    hid_t f = open_copy(ref, p, sizeof p, "str.h5");
    put_vlen_str(f, "/config", "pos_encoding", "none");
    put_vlen_str(f, "/config", "task", "sort"); /* an older file's experiment key: ignored (test_checkpoint) */
    put_vlen_str(f, "/run", "note", "\xce\xb1-rope \xe2\x9c\x93"); /* "α-rope ✓" */
    put_vlen_str(f, "/run", "long", long_str);
    close_edit(f, p);
    rg_model *m = new_model(4);
    rg_run_state rs;
    if (rg_checkpoint_load(p, m, NULL, &rs) != RG_OK) fail_msg("load: %s", rg_last_error());
    assert_null(rg_run_state_attr(&rs, "task"));
    assert_string_equal(rg_run_state_attr(&rs, "note")->s, "\xce\xb1-rope \xe2\x9c\x93");
    assert_string_equal(rg_run_state_attr(&rs, "long")->s, long_str);
    /* written back (UTF-8 and long, fixed length) and read again */
    path_in(p, sizeof p, "str2.h5");
    assert_int_equal(rg_checkpoint_save(p, m, NULL, &rs), RG_OK);
    rg_run_state rs2;
    assert_int_equal(rg_checkpoint_load(p, m, NULL, &rs2), RG_OK);
    assert_string_equal(rg_run_state_attr(&rs2, "note")->s, "\xce\xb1-rope \xe2\x9c\x93");
    assert_string_equal(rg_run_state_attr(&rs2, "long")->s, long_str);
    /* too long for the run state, and invalid UTF-8: clear errors */
    char *huge = malloc(RG_CKPT_STR_LEN + 10);
    memset(huge, 'z', RG_CKPT_STR_LEN + 9);
    huge[RG_CKPT_STR_LEN + 9] = 0;
    f = open_copy(ref, p, sizeof p, "str3.h5");
    put_vlen_str(f, "/run", "huge", huge);
    close_edit(f, p);
    expect_load_error(p, RG_ERR_FORMAT, "attribute 'huge' on /run has 1033 characters, at most 1023 fit", NULL);
    free(huge);
    f = open_copy(ref, p, sizeof p, "str4.h5");
    put_vlen_str(f, "/run", "bad", "\xff\xfe");
    close_edit(f, p);
    expect_load_error(p, RG_ERR_FORMAT, "attribute 'bad' on /run is not valid UTF-8", NULL);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corruption_table),
        cmocka_unit_test(test_digest),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests_name("checkpoint files", tests, setup, teardown);
}
