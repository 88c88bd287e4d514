/* test_ckpt_grid.c: crafted checkpoints of the grid encodings (t5-2d, learned-2d, mrope, rope-2d; pos_grid_bias.h,
 * pos_ext.h), made here with HDF5 surgery on a saved checkpoint of each and re-sealed (rg_checkpoint_seal) so that
 * the edit reaches the reader. Every case is a setting a hostile file may hold: within the setting's declared limits
 * but contradicting another setting (t5_2d_max_distance <= t5_2d_num_buckets / 4, mrope sections that do not sum to
 * the rotary pairs), outside its limits (negative, 2^30, NaN), disagreeing with the stored table
 * (t5_2d_num_buckets 64 beside [32, H] tables; learned_2d_max_rows 2^20 beside a [16, d] table: refused before any
 * table of that size is made: rg_model_new_within) or with rope_layout. rg_checkpoint_open must refuse each with
 * RG_ERR_FORMAT naming the file and the setting or table, rg_checkpoint_load into a model of the encoding must refuse
 * it leaving the model untouched, and nothing may crash or abort. One table, one loop. */
#include "ckpt_helpers.h"

typedef enum { SET_I64, SET_F64, SET_STR } set_kind;

typedef struct {
    const char *pos;     /* the encoding of the saved checkpoint */
    const char *attr;    /* the /config attribute replaced */
    set_kind kind;
    double num;          /* the value (SET_I64, SET_F64) */
    const char *str;     /* the value (SET_STR) */
    const char *want1, *want2; /* in the message */
    rg_status code;      /* of rg_checkpoint_open; 0: RG_ERR_FORMAT (a table of the file not the shape its /config
                          * gives is RG_ERR_SHAPE, rg_checkpoint_load's shape mismatch) */
} grid_case;

static const grid_case CASES[] = {
    {"t5-2d", "t5_2d_max_distance", SET_I64, 3, NULL, "t5_2d_max_distance 3 must be > t5_2d_num_buckets/4", NULL, 0},
    {"t5-2d", "t5_2d_num_buckets", SET_I64, 64, NULL, "rel_bias_row.weight has shape [32, 2]", NULL, RG_ERR_SHAPE},
    {"t5-2d", "t5_2d_num_buckets", SET_I64, 1 << 30, NULL, "t5_2d_num_buckets", NULL, 0},
    {"t5-2d", "t5_2d_num_buckets", SET_I64, 0, NULL, "t5_2d_num_buckets", NULL, 0},
    {"t5-2d", "t5_2d_max_distance", SET_F64, NAN, NULL, "t5_2d_max_distance", NULL, 0},
    {"learned-2d", "learned_2d_max_rows", SET_I64, 1 << 20, NULL, "pos_emb_row.weight", "past its limit", 0},
    {"learned-2d", "learned_2d_max_cols", SET_I64, -5, NULL, "learned_2d_max_cols", NULL, 0},
    {"learned-2d", "learned_2d_max_cols", SET_I64, 4, NULL, "pos_emb_col.weight has shape [16, 16]", NULL,
     RG_ERR_SHAPE},
    {"learned", "max_len", SET_I64, 1 << 20, NULL, "pos_emb.weight", "past its limit", 0}, /* the 1-D table too */
    {"mrope", "mrope_section_t", SET_I64, 3, NULL, "mrope_section", "must sum to rotary_dim / 2", 0},
    {"mrope", "mrope_section_w", SET_I64, -1, NULL, "mrope_section_w", NULL, 0},
    {"mrope", "mrope_section_h", SET_I64, 1e9, NULL, "mrope_section_h", NULL, 0},
    {"mrope", "rope_layout", SET_STR, 0, "interleaved", "rope_layout 'interleaved'", "mrope", 0},
    {"rope-2d", "rope_layout", SET_STR, 0, "half", "rope_layout 'half'", "rope-2d", 0},
    {"rope-2d", "pos_encoding", SET_STR, 0, "rope-3d", "unknown position encoding 'rope-3d'", NULL, 0},
};

/* A checkpoint of small_config() with encoding pos, its path in buf. */
static void save_grid(const char *pos, char *buf, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "ref-%s.h5", pos);
    path_in(buf, n, name);
    rg_model_config c = small_config();
    assert_int_equal(rg_pos_parse(pos, &c.pos), RG_OK);
    rg_model *m = NULL;
    if (rg_model_new(&c, 3, &m) != RG_OK) fail_msg("rg_model_new %s: %s", pos, rg_last_error());
    rg_run_state rs;
    run_state(&rs);
    if (rg_checkpoint_save(buf, m, NULL, &rs) != RG_OK) fail_msg("save %s: %s", pos, rg_last_error());
    rg_model_free(m);
}

/* rg_checkpoint_open (the model built from the file's /config, as train_order --eval and --resume do) and
 * rg_checkpoint_load into a model of the case's encoding both refuse the file, naming it; the load leaves the model
 * untouched. */
static void expect_refused(const grid_case *k, const char *p)
{
    rg_model *m = NULL;
    rg_status st = rg_checkpoint_open(p, &m, NULL, NULL);
    const rg_status want = k->code ? k->code : RG_ERR_FORMAT;
    if (st != want)
        fail_msg("open %s: status %d, want %d (%s)", p, (int)st, (int)want, st ? rg_last_error() : "loaded");
    assert_null(m);
    assert_contains(rg_last_error(), p);
    assert_contains(rg_last_error(), k->want1);
    if (k->want2) assert_contains(rg_last_error(), k->want2);
    rg_model_config c = small_config();
    assert_int_equal(rg_pos_parse(k->pos, &c.pos), RG_OK);
    assert_int_equal(rg_model_new(&c, 9, &m), RG_OK);
    snapshot s = snap(m, NULL);
    if (rg_checkpoint_load(p, m, NULL, NULL) == RG_OK) fail_msg("load %s into a %s model succeeded", p, k->pos);
    assert_contains(rg_last_error(), p);
    assert_same(&s, m, NULL, "after a failed load");
    snap_free(&s);
    rg_model_free(m);
}

static void test_crafted_grid_settings(void **state)
{
    (void)state;
    rg_checkpoint_set_max_params(1 << 20); /* the small models have a few thousand; 2^20 x d_model rows do not fit */
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        const grid_case *k = &CASES[i];
        char ref[600], p[600], name[64];
        save_grid(k->pos, ref, sizeof ref);
        snprintf(name, sizeof name, "case%zu.h5", i);
        hid_t f = open_copy(ref, p, sizeof p, name);
        if (k->kind == SET_I64) put_i64(f, "/config", k->attr, (int64_t)k->num);
        else if (k->kind == SET_F64) put_f64(f, "/config", k->attr, k->num);
        else put_str(f, "/config", k->attr, k->str);
        close_edit(f, p);
        print_message("case %zu: %s %s\n", i, k->pos, k->attr);
        expect_refused(k, p);
    }
    rg_checkpoint_set_max_params(0);
}

/* The control: the unedited checkpoints load (so the refusals above are the edits'). */
static void test_unedited_loads(void **state)
{
    (void)state;
    const char *pos[] = {"t5-2d", "learned-2d", "mrope", "rope-2d"};
    for (int i = 0; i < 4; i++) {
        char ref[600];
        save_grid(pos[i], ref, sizeof ref);
        rg_model_config c = small_config();
        assert_int_equal(rg_pos_parse(pos[i], &c.pos), RG_OK);
        rg_model *m = NULL;
        assert_int_equal(rg_model_new(&c, 9, &m), RG_OK);
        if (rg_checkpoint_load(ref, m, NULL, NULL) != RG_OK) fail_msg("load %s: %s", pos[i], rg_last_error());
        rg_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unedited_loads),
        cmocka_unit_test(test_crafted_grid_settings),
    };
    return cmocka_run_group_tests_name("crafted grid checkpoints", tests, setup, teardown);
}
