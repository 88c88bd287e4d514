/* results_file.c: a finished run's results on disk, <out>/results/<run>.bin, so that an interrupted invocation's
 * finished runs are kept by --continue (continue.c) instead of living only in the parent's memory. A run writes its
 * file atomically (rg_atomic_write: a temporary file renamed into place) once it has evaluated every row; the file
 * is then the run's eng_result records exactly as the job pool hands them to the report.
 *
 * The file is read back as user input (a folder a user may have edited, or another version wrote): its size is
 * checked before anything is allocated, a header names the format, its version and the record size of the version
 * that wrote it, a CRC-32 covers the records, and every field is checked against the run it must be (task,
 * encoding, variant, seed, the invocation's test lengths and RoPE scalings, ranges of every count and score). */
#include "engine/run/results_file.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/run/lm_run.h"
#include "io/guard.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAGIC "train_order res"  /* 15 characters and the NUL: the header's first 16 bytes */
#define VERSION 1u

typedef struct {
    char magic[16];
    uint32_t version;        /* VERSION */
    uint32_t record_bytes;   /* sizeof(eng_result) of the version that wrote the file */
    uint32_t count;          /* records (0 for an LM task's run: its results are lm_report's files) */
    uint32_t crc;            /* rg_crc32 of the records' bytes */
    uint32_t settings;       /* eng_settings_digest of the invocation that ran it */
    uint32_t spare;
} header;

void eng_results_path(const eng_options *o, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*s/results/%s.bin", ENG_PATH - 1, o->out, name);
}

int eng_results_save(const eng_options *o, uint32_t digest, const char *name, const eng_result *res, int n)
{
    char dir[ENG_PATH + 16], path[ENG_PATH + 160];
    snprintf(dir, sizeof dir, "%.*s/results", ENG_PATH - 1, o->out);
    eng_results_path(o, name, path, sizeof path);
    if (eng_make_dir(dir)) return -1;
    size_t bytes = sizeof(header) + sizeof *res * (size_t)n;
    unsigned char *buf = calloc(1, bytes);
    if (!buf) {
        eng_err("%s: out of memory\n", path);
        return -1;
    }
    eng_result *rec = (eng_result *)(buf + sizeof(header));
    memcpy(rec, res, sizeof *res * (size_t)n);
    for (int i = 0; i < n; i++) rec[i].runs_dir = NULL; /* a pointer: meaningless in a file */
    header h = {MAGIC, VERSION, (uint32_t)sizeof *res, (uint32_t)n, rg_crc32(0, rec, sizeof *res * (size_t)n),
                digest, 0};
    memcpy(buf, &h, sizeof h);
    rg_status st = rg_atomic_write("results of the run", path, buf, bytes);
    free(buf);
    if (st) eng_err("%s\n", rg_last_error());
    return st ? -1 : 0;
}

/* Whether every byte of a bool field is 0 or 1 (another byte would be undefined behaviour to read as bool). */
static bool bools_ok(const bool *b, int n)
{
    const unsigned char *p = (const unsigned char *)b;
    for (int i = 0; i < n; i++)
        if (p[i] > 1) return false;
    return true;
}

static bool score_ok(double v) { return isnan(v) || (v >= 0 && v <= 1); }

/* The per-position and grid-cell counts of slot i of r: no count above the samples it counts. */
static bool counts_ok(const eng_result *r, int i)
{
    int n = r->lens[i];
    if (r->pos_count[i] < 0 || r->pos_count[i] > UINT16_MAX) return false;
    for (int p = 0; p < ENG_POS_MAX; p++)
        if (r->pos_right[i][p] > r->pos_count[i] || r->first_wrong[i][p] > r->pos_count[i]) return false;
    if (r->first_wrong[i][ENG_POS_MAX] > r->pos_count[i]) return false;
    for (int c = 0; c < ENG_GRID_CELLS; c++)
        if (r->cell_right[i][c] > r->cell_count[i][c]) return false;
    return n >= 1;
}

/* What is wrong with record k of a run of job j under o (NULL when nothing): written into why. */
static const char *check_record(const eng_options *o, const eng_job *j, const eng_result *r, int k, char *why,
                                size_t cap)
{
    char label[96];
    rg_rope_ext ext = k ? o->exts[k - 1] : RG_ROPE_EXT_NONE;
    double factor = k ? o->ext_factor[k - 1] : 0;
    const char *size = o->n_sizes ? o->sizes[0].text : ""; /* o: the run's options (one size, or none) */
    if (r->task != j->task || r->pos != j->pos || r->variant != eng_variant_of(o, j->pos) || r->seed != j->seed ||
        r->ext != ext || r->ext_factor != factor || strnlen(r->size, sizeof r->size) == sizeof r->size ||
        strcmp(r->size, size) != 0)
        snprintf(why, cap, "record %d is not row %s of this run", k + 1, eng_label(j->pos, eng_variant_of(o, j->pos),
                 ext, factor, label, sizeof label));
    else if (r->n_lens != o->n_test_lens || memcmp(r->lens, o->test_lens, sizeof(int) * (size_t)o->n_test_lens))
        snprintf(why, cap, "record %d has other test lengths than the invocation's", k + 1);
    else if (r->steps != o->steps || r->steps_to_learn < -1 || r->steps_to_learn > r->steps)
        snprintf(why, cap, "record %d: steps %lld / steps_to_learn %lld, but the run trains %d steps", k + 1,
                 (long long)r->steps, (long long)r->steps_to_learn, o->steps);
    else if (!(isnan(r->final_loss) || (isfinite(r->final_loss) && r->final_loss >= 0)) ||
             !(isfinite(r->train_seconds) && r->train_seconds >= 0) || !bools_ok(r->generated, ENG_MAX_LENS))
        snprintf(why, cap, "record %d: its loss, time or generated flags are outside their ranges", k + 1);
    else why[0] = 0;
    for (int i = 0; !why[0] && i < r->n_lens; i++)
        if (!score_ok(r->exact[i]) || !score_ok(r->token_acc[i]) || !counts_ok(r, i))
            snprintf(why, cap, "record %d, n=%d: a score outside [0, 1] or a count above its samples", k + 1,
                     r->lens[i]);
    return why[0] ? why : NULL;
}

/* The file's bytes (at most `most`), or NULL with why. */
static unsigned char *read_bytes(const char *path, size_t most, size_t *n, char *why, size_t cap)
{
    FILE *f = eng_fopen_read(path);
    struct stat st;
    unsigned char *buf = NULL;
    if (!f || fstat(fileno(f), &st) != 0) snprintf(why, cap, "cannot be read: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode)) snprintf(why, cap, "not a regular file");
    else if ((uint64_t)st.st_size < sizeof(header) || (uint64_t)st.st_size > most)
        snprintf(why, cap, "%lld bytes, but a results file has %zu to %zu", (long long)st.st_size, sizeof(header),
                 most);
    else if (!(buf = malloc((size_t)st.st_size))) snprintf(why, cap, "out of memory");
    else if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size || fgetc(f) != EOF) {
        snprintf(why, cap, "changed while being read");
        free(buf);
        buf = NULL;
    }
    *n = buf ? (size_t)st.st_size : 0;
    if (f) fclose(f);
    return buf;
}

int eng_results_load(const eng_options *o, uint32_t digest, const eng_job *j, const char *path, eng_result *res,
                    char *why, size_t cap)
{
    bool rope = eng_pos_rotary(j->pos); /* every rotary encoding has a row per --rope-scaling type */
    int want = eng_lm_task(j->task) ? 0 : 1 + (rope ? o->n_exts : 0);
    size_t n, most = sizeof(header) + sizeof *res * (1 + ENG_MAX_EXTS);
    unsigned char *buf = read_bytes(path, most, &n, why, cap);
    if (!buf) return -1;
    header h;
    memcpy(&h, buf, sizeof h);
    const eng_result *rec = (const eng_result *)(buf + sizeof h);
    if (memcmp(h.magic, MAGIC, sizeof h.magic) != 0) snprintf(why, cap, "not a train_order results file");
    else if (h.version != VERSION || h.record_bytes != sizeof *res)
        snprintf(why, cap, "written by another version of train_order (format %u, records of %u bytes; this one "
                 "reads format %u, %zu bytes)", h.version, h.record_bytes, VERSION, sizeof *res);
    else if (h.count != (uint32_t)want || n != sizeof h + sizeof *res * (size_t)want)
        snprintf(why, cap, "%u records in %zu bytes, but the run has %d rows (%zu bytes)", h.count, n, want,
                 sizeof h + sizeof *res * (size_t)want);
    else if (rg_crc32(0, rec, sizeof *res * (size_t)want) != h.crc)
        snprintf(why, cap, "its records do not match their CRC-32 (corrupted, or edited after the run wrote them)");
    else if (h.settings != digest)
        snprintf(why, cap, "written by an invocation with other settings (a folder reused with --overwrite?)");
    else why[0] = 0;
    for (int k = 0; !why[0] && k < want; k++) check_record(o, j, &rec[k], k, why, cap);
    if (!why[0]) {
        memcpy(res, rec, sizeof *res * (size_t)want);
        for (int k = 0; k < want; k++) res[k].runs_dir = NULL;
    }
    free(buf);
    return why[0] ? -1 : want;
}
