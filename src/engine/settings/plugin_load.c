/* plugin_load.c: loading plugins (plugin.h, plugin_load.h): dlopen, the magic record checked as data before any of
 * the plugin's functions runs, rg_plugin_init, and which encodings and tasks each plugin registered; SHA-256 of the
 * plugin file (FIPS 180-4) for checkpoints and the MPI ranks' check. */
#define _GNU_SOURCE /* dladdr1: the size of the magic record's symbol */
#include "engine/settings/plugin_load.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/settings/lists.h"
#include "engine/settings/option_table.h"
#include "engine/plugin.h"
#include "io/checkpoint.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static eng_plugin plugins[ENG_PLUGIN_MAX];
static int n_plugins;

/* ------------------------------------------------------------------ SHA-256 */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) +
                      K256[i] + w[i];
        uint32_t t2 = (ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof *v);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) h[i] += v[i];
}

int eng_sha256_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char buf[128];
    uint64_t bits = 0;
    size_t n;
    while ((n = fread(buf, 1, 64, f)) == 64) {
        sha256_block(h, buf);
        bits += 512;
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) { errno = err; return -1; }
    bits += 8 * (uint64_t)n; /* the last partial block, 0x80, zeros, the length in bits (big-endian) */
    buf[n] = 0x80;
    size_t total = n + 1 + 8 <= 64 ? 64 : 128;
    memset(buf + n + 1, 0, total - n - 1);
    for (int i = 0; i < 8; i++) buf[total - 1 - i] = (unsigned char)(bits >> (8 * i));
    sha256_block(h, buf);
    if (total == 128) sha256_block(h, buf + 64);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", h[i]);
    return 0;
}

/* ------------------------------------------------------------------ loading */

static const char *real_name(int bytes) { return bytes == 8 ? "float64" : bytes == 4 ? "float32" : "an unknown type"; }

/* The plugin's record against this program's: NULL when it fits, else what differs (into buf). */
static const char *magic_mismatch(const rg_plugin_magic_t *m, char *buf, size_t cap)
{
    if (strncmp(m->tag, "rgplug", sizeof m->tag) || m->abi != RG_PLUGIN_ABI)
        snprintf(buf, cap, "plugin ABI %d, this program's is %d", m->abi, RG_PLUGIN_ABI);
    else if (m->version_major != RG_VERSION_MAJOR || (RG_VERSION_MAJOR == 0 && m->version_minor != RG_VERSION_MINOR))
        snprintf(buf, cap, "built against ropegrad %d.%d.%d, this program is ropegrad %s", m->version_major,
                 m->version_minor, m->version_patch, rg_version());
    else if (m->real_bytes != (int)sizeof(rg_real))
        snprintf(buf, cap, "built for %s (%s), this program is %s: rebuild the plugin %s-DRG_DOUBLE",
                 real_name(m->real_bytes), m->real_bytes == 8 ? "-DRG_DOUBLE" : "without -DRG_DOUBLE",
                 rg_build_real(), sizeof(rg_real) == 8 ? "with " : "without ");
    else if (m->pos_desc_bytes != (int)sizeof(rg_pos_encoding) || m->task_desc_bytes != (int)sizeof(rg_task_desc))
        snprintf(buf, cap, "its descriptors are of another layout (rg_pos_encoding %d bytes, rg_task_desc %d; this "
                 "program's %d and %d): rebuild it against this program's headers", m->pos_desc_bytes,
                 m->task_desc_bytes, (int)sizeof(rg_pos_encoding), (int)sizeof(rg_task_desc));
    else
        return NULL;
    return buf;
}

static _Noreturn void refuse(int status, const char *path, const char *fmt, const char *detail)
{
    fprintf(stderr, "%s: --plugin %s: ", eng_prog(), path);
    fprintf(stderr, fmt, detail);
    fprintf(stderr, "\n");
    exit(status);
}

static void load_one(const char *path)
{
    char hex[65], why[512];
    if (access(path, R_OK) != 0 || eng_sha256_file(path, hex) != 0)
        refuse(2, path, "cannot be read: %s", strerror(errno));
    for (int i = 0; i < n_plugins; i++)
        if (!strcmp(plugins[i].sha256, hex)) return; /* the same file again (the flag and the environment) */
    if (n_plugins == ENG_PLUGIN_MAX) refuse(2, path, "more than %s plugins", "16");
    /* a name without '/' would be searched in the library path: the user means the file */
    char full[1100];
    snprintf(full, sizeof full, "%s%s", strchr(path, '/') ? "" : "./", path);
    void *h = dlopen(full, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (e && strstr(e, "rg_build_float64"))
            refuse(2, path, "built for float64 (-DRG_DOUBLE: it needs the float64 build guard rg_build_float64), "
                   "this program is %s: rebuild the plugin without -DRG_DOUBLE", rg_build_real());
        if (e && strstr(e, "rg_build_float32"))
            refuse(2, path, "built for float32, this program is %s: rebuild the plugin with -DRG_DOUBLE",
                   rg_build_real());
        /* whatever the reason (not ELF, too short, truncated, another architecture, a library it needs missing):
         * a file given on the command line that is not a loadable plugin, as every refusal before its init runs */
        refuse(2, path, "not a shared library this program can load (dlopen failed: %s)", e ? e : "unknown error");
    }
    const rg_plugin_magic_t *m = dlsym(h, "rg_plugin_magic");
    if (!m) refuse(2, path, "%s", "not a ropegrad plugin: no rg_plugin_magic (put RG_PLUGIN_MAGIC; in its source, "
                   "<ropegrad/engine/plugin.h>)");
    const ElfW(Sym) *sym = NULL; /* the symbol's own size: a smaller object of that name is never read past its end */
    Dl_info info;
    if (!dladdr1(m, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ||
        sym->st_size < sizeof *m) {
        snprintf(why, sizeof why, "its rg_plugin_magic is %s%zu bytes, not the record of %zu bytes RG_PLUGIN_MAGIC "
                 "emits", sym && ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ? "not a data object, " : "",
                 sym ? (size_t)sym->st_size : (size_t)0, sizeof *m);
        refuse(2, path, "not a ropegrad plugin: %s", why);
    }
    if (magic_mismatch(m, why, sizeof why)) refuse(2, path, "refused: %s", why);
    rg_status (*init)(void);
    *(void **)&init = dlsym(h, "rg_plugin_init");
    if (!init) refuse(2, path, "%s", "not a ropegrad plugin: no rg_plugin_init function");
    eng_plugin *p = &plugins[n_plugins];
    snprintf(p->path, sizeof p->path, "%s", path);
    snprintf(p->file, sizeof p->file, "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    memcpy(p->sha256, hex, sizeof hex);
    p->pos_first = rg_pos_count();
    p->task_first = rg_task_count();
    rg_error_clear(); /* an older message is not the plugin's reason */
    if (init() != RG_OK) {
        if (rg_last_error()[0]) refuse(1, path, "rg_plugin_init failed: %s", rg_last_error());
        refuse(1, path, "%s", "its init function returned failure without a message (rg_plugin_init; say why with "
               "rg_error)");
    }
    p->pos_end = rg_pos_count();
    p->task_end = rg_task_count();
    n_plugins++; /* the handle stays open: the descriptors live in the library */
}

void eng_plugins_load(int argc, char **argv)
{
    const char *env = getenv("ROPEGRAD_PLUGINS");
    if (env && *env) {
        char *list = strdup(env);
        for (char *save = NULL, *p = list ? strtok_r(list, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save))
            load_one(p);
        free(list);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc) load_one(argv[++i]);
        else if (!strncmp(argv[i], "--plugin=", 9)) load_one(argv[i] + 9);
    }
}

int eng_plugin_loaded(const char *path)
{
    for (int i = 0; i < n_plugins; i++)
        if (!strcmp(plugins[i].path, path)) return 0;
    char hex[65]; /* the same file under another name (loaded once) */
    for (int i = 0; i < n_plugins && eng_sha256_file(path, hex) == 0; i++)
        if (!strcmp(plugins[i].sha256, hex)) return 0;
    return -1;
}

int eng_plugin_count(void) { return n_plugins; }
const eng_plugin *eng_plugin_at(int i) { return i >= 0 && i < n_plugins ? &plugins[i] : NULL; }

const eng_plugin *eng_plugin_of_pos(int id)
{
    for (int i = 0; i < n_plugins; i++)
        if (id >= plugins[i].pos_first && id < plugins[i].pos_end) return &plugins[i];
    return NULL;
}

const eng_plugin *eng_plugin_of_task(int id)
{
    for (int i = 0; i < n_plugins; i++)
        if (id >= plugins[i].task_first && id < plugins[i].task_end) return &plugins[i];
    return NULL;
}

/* ------------------------------------------------------------------ the --plugin option (settings.c's table) */


/* The plugins were loaded before parsing (eng_plugins_load): the parser only checks that this one was. */
int eng_parse_plugin(eng_options *o, char *v)
{
    (void)o;
    return eng_plugin_loaded(v);
}

void eng_print_plugin(const eng_options *o, char *b, size_t n)
{
    (void)o;
    b[0] = 0;
    for (int i = 0; i < n_plugins; i++)
        snprintf(b + strlen(b), n - strlen(b), "%s%s", i ? ":" : "", plugins[i].path);
}

/* ------------------------------------------------------------------ the checkpoint's record */

int eng_plugin_record(rg_run_state *rs, int pos, int task)
{
    char text[RG_CKPT_STR_LEN] = "";
    const eng_plugin *pp = eng_plugin_of_pos(pos), *pt = eng_plugin_of_task(task);
    if (pp)
        snprintf(text, sizeof text, "encoding %s %s sha256:%s\n", rg_pos_name((rg_pos_kind)pos), pp->file, pp->sha256);
    if (pt)
        snprintf(text + strlen(text), sizeof text - strlen(text), "task %s %s sha256:%s\n", rg_task_name(task),
                 pt->file, pt->sha256);
    return text[0] && rg_run_state_set_str(rs, ENG_PLUGIN_ATTR, text) ? -1 : 0;
}

void eng_plugin_hint(const char *ckpt, const char *flag)
{
    static rg_run_state rs;
    const rg_run_attr *a;
    if (rg_checkpoint_read_run(ckpt, &rs) || !(a = rg_run_state_attr(&rs, ENG_PLUGIN_ATTR)) ||
        a->type != RG_RUN_ATTR_STRING)
        return; /* no record: the usual checks say what is wrong */
    char text[RG_CKPT_STR_LEN];
    snprintf(text, sizeof text, "%s", a->s);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char kind[16], name[64], file[256], hex[65];
        if (sscanf(line, "%15s %63s %255s sha256:%64s", kind, name, file, hex) != 4) continue;
        bool is_task = !strcmp(kind, "task");
        int id = -1;
        if (is_task) { rg_task t; if (rg_task_parse(name, &t) == RG_OK) id = t; }
        else { rg_pos_kind k; if (rg_pos_parse(name, &k) == RG_OK) id = (int)k; }
        const eng_plugin *p = id < 0 ? NULL : is_task ? eng_plugin_of_task(id) : eng_plugin_of_pos(id);
        if (id < 0) {
            fprintf(stderr, "%s: %s: checkpoint %s: its %s '%s' was registered by the plugin %s (sha256 %.16s...), "
                    "which is not loaded: pass --plugin PATH/%s (a checkpoint never loads code itself)\n", eng_prog(),
                    flag, ckpt, kind, name, file, hex, file);
            exit(2);
        }
        if (p && strcmp(p->sha256, hex))
            fprintf(stderr, "%s: note: %s: checkpoint %s: its %s '%s' came from %s sha256 %.16s..., the loaded %s is "
                    "sha256 %.16s...\n", eng_prog(), flag, ckpt, kind, name, file, hex, p->file, p->sha256);
    }
}

void eng_plugins_usage(FILE *f)
{
    if (n_plugins) fprintf(f, "\nPlugins loaded (--plugin, ROPEGRAD_PLUGINS):\n");
    for (int i = 0; i < n_plugins; i++) {
        const eng_plugin *p = &plugins[i];
        fprintf(f, "  %s (sha256 %.16s...)\n", p->path, p->sha256);
        for (int k = p->pos_first; k < p->pos_end; k++) {
            const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)k);
            fprintf(f, "    --pos %-16s %s\n", e->name, e->doc ? e->doc : "");
        }
        for (int t = p->task_first; t < p->task_end; t++) {
            const char *summary = rg_task_get(t)->summary;
            fprintf(f, "    --task %-15s %s\n", rg_task_name(t), summary ? summary : "");
        }
    }
}

void eng_plugins_fingerprint(char *buf, size_t cap)
{
    buf[0] = 0;
    for (int i = 0; i < n_plugins; i++) /* 48 characters of the file name and 24 of the digest: < 80 per plugin */
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%.48s:%.24s", i ? " " : "", plugins[i].file,
                 plugins[i].sha256);
}
