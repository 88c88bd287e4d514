/* h5_image.c: see h5_image.h. The parent's side of rg_h5_image_load: the file checks before any byte is read, the
 * child process and its limits, the strict reading of its stream (h5_walk.c documents the records) into an image,
 * and the queries the loaders make of it. Nothing here calls HDF5 on the file. */
#include "h5_image.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define RG_UNDER_ASAN 1 /* ASan reserves terabytes of address space: no RLIMIT_AS for the child */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RG_UNDER_ASAN 1
#endif
#endif

/* ================================================================== the image */

typedef struct {
    char *name;
    unsigned cls, standard;
    char desc[64];
    int64_t npts;
    bool has_value, is_unsigned;
    uint64_t bits;
    double d;
    char *s;
    char *err;
} attr;

struct rg_h5_obj {
    const rg_h5_image *im;
    char *path; /* "" for the root, else "/a/b" */
    int parent, kind;
    /* datasets */
    unsigned cls, size, is_unsigned, standard;
    char desc[64];
    int nd;
    hsize_t dims[RG_H5I_MAX_ND];
    unsigned err_kind;
    char *err;
    unsigned char *data;
    uint64_t nbytes;
    bool has_data;
    int first_attr, n_attrs;
};

struct rg_h5_image {
    rg_h5_obj *objs;
    int n_objs, cap_objs;
    attr *attrs;
    int n_attrs, cap_attrs;
    int *sorted; /* object indices by path */
};

void rg_h5_image_free(rg_h5_image *im)
{
    if (!im) return;
    for (int i = 0; i < im->n_objs; i++) {
        free(im->objs[i].path);
        free(im->objs[i].err);
        free(im->objs[i].data);
    }
    for (int i = 0; i < im->n_attrs; i++) {
        free(im->attrs[i].name);
        free(im->attrs[i].s);
        free(im->attrs[i].err);
    }
    free(im->objs);
    free(im->attrs);
    free(im->sorted);
    free(im);
}

const rg_h5_obj *rg_h5_image_root(const rg_h5_image *im) { return &im->objs[0]; }

/* ================================================================== reading the stream */

typedef struct {
    int fd;
    unsigned char buf[1 << 16];
    size_t pos, len;
    double deadline; /* CLOCK_MONOTONIC seconds */
    bool eof, timeout, malformed;
    char why[160];   /* what was malformed */
    uint64_t budget; /* dataset bytes still accepted */
} reader;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static bool bad(reader *r, const char *why)
{
    if (!r->malformed && !r->eof && !r->timeout) snprintf(r->why, sizeof r->why, "%s", why);
    r->malformed = true;
    return false;
}

/* Exactly n bytes into dst; false at the end of the stream, on a timeout or an earlier failure. */
static bool get(reader *r, void *dst, size_t n)
{
    unsigned char *d = dst;
    while (n) {
        if (r->eof || r->timeout || r->malformed) return false;
        if (r->pos == r->len) {
            double left = r->deadline - now_s();
            if (left <= 0) { r->timeout = true; return false; }
            struct pollfd p = {r->fd, POLLIN, 0};
            int k = poll(&p, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
            if (k < 0 && errno == EINTR) continue;
            if (k == 0) continue; /* the deadline is checked above */
            ssize_t got = read(r->fd, r->buf, sizeof r->buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) { r->eof = true; return false; }
            r->pos = 0;
            r->len = (size_t)got;
        }
        size_t k = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(d, r->buf + r->pos, k);
        r->pos += k;
        d += k;
        n -= k;
    }
    return true;
}

static bool get_u8(reader *r, unsigned *v, unsigned max)
{
    unsigned char b;
    if (!get(r, &b, 1)) return false;
    *v = b;
    return b <= max || bad(r, "a field outside its range");
}

/* A string of at most max bytes without NUL, malloc'ed into *s. */
static bool get_str(reader *r, char **s, uint32_t max)
{
    uint32_t n;
    *s = NULL;
    if (!get(r, &n, 4)) return false;
    if (n > max) return bad(r, "a string longer than its limit");
    char *p = malloc((size_t)n + 1);
    if (!p) return bad(r, "out of memory");
    if (!get(r, p, n)) { free(p); return false; }
    p[n] = 0;
    if (memchr(p, 0, n)) { free(p); return bad(r, "a string holding a NUL byte"); }
    *s = p;
    return true;
}

static bool get_str_buf(reader *r, char *buf, size_t n)
{
    char *s;
    if (!get_str(r, &s, (uint32_t)n - 1)) return false;
    memcpy(buf, s, strlen(s) + 1);
    free(s);
    return true;
}

static bool get_facts(reader *r, unsigned *cls, unsigned *size, unsigned *is_u, unsigned *standard, char *desc)
{
    return get_u8(r, cls, RG_H5I_CLS_OTHER) && get_u8(r, size, 255) && get_u8(r, is_u, 1) && get_u8(r, standard, 1) &&
           get_str_buf(r, desc, 64);
}

/* The parent of path p among the open groups (stack, depth-first order); pops the groups that are done. */
static int parent_of(rg_h5_image *im, int *stack, int *depth, const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash || !slash[1]) return -1;
    size_t plen = (size_t)(slash - p);
    while (*depth > 0) {
        const char *q = im->objs[stack[*depth - 1]].path;
        if (strlen(q) == plen && strncmp(q, p, plen) == 0) return stack[*depth - 1];
        (*depth)--;
    }
    return -1;
}

static rg_h5_obj *new_obj(rg_h5_image *im, reader *r)
{
    if (im->n_objs == im->cap_objs) {
        int cap = im->cap_objs ? 2 * im->cap_objs : 64;
        rg_h5_obj *p = realloc(im->objs, (size_t)cap * sizeof *p);
        if (!p) { bad(r, "out of memory"); return NULL; }
        im->objs = p;
        im->cap_objs = cap;
    }
    rg_h5_obj *o = &im->objs[im->n_objs++];
    memset(o, 0, sizeof *o);
    o->first_attr = im->n_attrs;
    return o;
}

static bool read_dataset_rec(reader *r, rg_h5_obj *o)
{
    int32_t nd;
    if (!get_facts(r, &o->cls, &o->size, &o->is_unsigned, &o->standard, o->desc) || !get(r, &nd, 4)) return false;
    if (nd < -1 || nd > RG_H5I_MAX_ND) return bad(r, "a dataset rank outside its range");
    o->nd = nd;
    uint64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t d;
        if (!get(r, &d, 8)) return false;
        o->dims[i] = d;
        numel = d && numel > UINT64_MAX / d ? UINT64_MAX : numel * d;
    }
    unsigned has;
    if (!get_u8(r, &o->err_kind, 2) || !get_str(r, &o->err, 2048) || !get_u8(r, &has, 1)) return false;
    if (!has) return true;
    uint64_t nbytes;
    if (!get(r, &nbytes, 8)) return false;
    if (nd < 0 || !o->standard || o->err_kind || numel > UINT64_MAX / (o->size ? o->size : 1) ||
        nbytes != numel * o->size)
        return bad(r, "dataset values that do not match its shape and type");
    if (nbytes > r->budget) return bad(r, "more dataset bytes than the reader accepts");
    r->budget -= nbytes;
    if (!(o->data = malloc(nbytes ? nbytes : 1))) return bad(r, "out of memory");
    o->nbytes = nbytes;
    return (o->has_data = get(r, o->data, nbytes));
}

static bool read_attr_rec(reader *r, rg_h5_image *im, const rg_h5_obj *owner)
{
    char *opath = NULL;
    if (!get_str(r, &opath, RG_H5I_MAX_NAME)) return false;
    bool same = strcmp(opath, owner->path) == 0;
    free(opath);
    if (!same) return bad(r, "an attribute after an object other than its owner");
    if (im->n_attrs == im->cap_attrs) {
        int cap = im->cap_attrs ? 2 * im->cap_attrs : 64;
        attr *p = realloc(im->attrs, (size_t)cap * sizeof *p);
        if (!p) return bad(r, "out of memory");
        im->attrs = p;
        im->cap_attrs = cap;
    }
    attr *a = &im->attrs[im->n_attrs++];
    memset(a, 0, sizeof *a);
    unsigned size, is_u, has;
    if (!get_str(r, &a->name, RG_H5I_MAX_NAME) || !get_facts(r, &a->cls, &size, &is_u, &a->standard, a->desc) ||
        !get(r, &a->npts, 8) || !get_u8(r, &has, 1))
        return false;
    a->has_value = has;
    if (has && a->cls == RG_H5I_CLS_INT) {
        unsigned u;
        if (!get_u8(r, &u, 1) || !get(r, &a->bits, 8)) return false;
        a->is_unsigned = u;
    } else if (has && a->cls == RG_H5I_CLS_FLOAT) {
        if (!get(r, &a->d, 8)) return false;
    } else if (has && a->cls == RG_H5I_CLS_STRING) {
        if (!get_str(r, &a->s, RG_H5I_MAX_STR)) return false;
        if (!rg_h5_valid_utf8((const unsigned char *)a->s, strlen(a->s))) return bad(r, "a string that is not UTF-8");
    } else if (has) {
        return bad(r, "a value of an attribute of another class");
    }
    return get_str(r, &a->err, 2048);
}

static const rg_h5_image *sort_im;
static int cmp_idx(const void *a, const void *b)
{
    return strcmp(sort_im->objs[*(const int *)a].path, sort_im->objs[*(const int *)b].path);
}

/* Reads the whole stream into im. Returns true at a well-formed end record; a refusal ('E') sets *code and msg. */
static bool read_stream(reader *r, rg_h5_image *im, int max_records, rg_status *code, char *msg, size_t msg_n)
{
    uint32_t magic;
    if (!get(r, &magic, 4)) return false;
    if (magic != RG_H5I_MAGIC) return bad(r, "a wrong magic number");
    int stack[RG_H5I_MAX_DEPTH + 2], depth = 0;
    uint32_t records = 0;
    for (;;) {
        unsigned tag;
        if (!get_u8(r, &tag, 255)) return false;
        if (tag == RG_H5I_REC_END) {
            uint32_t n;
            if (!get(r, &n, 4)) return false;
            if (n != records || im->n_objs == 0) return bad(r, "a record count that does not match");
            break;
        }
        if (tag == RG_H5I_REC_ERR) {
            int32_t c;
            char *m = NULL;
            if (!get(r, &c, 4) || !get_str(r, &m, 2048)) return false;
            if (c != RG_ERR_IO && c != RG_ERR_FORMAT && c != RG_ERR_NOMEM) c = RG_ERR_FORMAT;
            *code = (rg_status)c;
            snprintf(msg, msg_n, "%s", m);
            free(m);
            return false;
        }
        if (++records > (uint32_t)max_records + 1) return bad(r, "more records than the object limit");
        if (tag == RG_H5I_REC_ATTR) {
            if (im->n_objs == 0) return bad(r, "an attribute before any object");
            rg_h5_obj *owner = &im->objs[im->n_objs - 1];
            if (!read_attr_rec(r, im, owner)) return false;
            owner->n_attrs++;
            continue;
        }
        if (tag != RG_H5I_REC_OBJ) return bad(r, "an unknown record");
        rg_h5_obj *o = new_obj(im, r);
        if (!o) return false;
        o->im = im;
        unsigned kind;
        if (!get_str(r, &o->path, RG_H5I_MAX_NAME) || !get_u8(r, &kind, RG_H5I_OTHER)) return false;
        o->kind = (int)kind;
        if (im->n_objs == 1) {
            if (o->path[0] || kind != RG_H5I_GROUP) return bad(r, "a first object that is not the root group");
            o->parent = -1;
        } else if ((o->parent = parent_of(im, stack, &depth, o->path)) < 0) {
            return bad(r, "an object whose parent group was not sent before it");
        }
        if (kind == RG_H5I_DATASET && !read_dataset_rec(r, o)) return false;
        if (kind == RG_H5I_GROUP) {
            if (depth > RG_H5I_MAX_DEPTH) return bad(r, "groups nested too deep");
            stack[depth++] = im->n_objs - 1;
        }
        if (kind == 0) return bad(r, "an object of kind 0");
    }
    /* the lookup index, and no two objects of the same path (a damaged group listing a name twice) */
    if (!(im->sorted = malloc((size_t)im->n_objs * sizeof *im->sorted))) return bad(r, "out of memory");
    for (int i = 0; i < im->n_objs; i++) {
        im->sorted[i] = i;
        im->objs[i].im = im;
    }
    sort_im = im;
    qsort(im->sorted, (size_t)im->n_objs, sizeof *im->sorted, cmp_idx);
    for (int i = 1; i < im->n_objs; i++)
        if (strcmp(im->objs[im->sorted[i]].path, im->objs[im->sorted[i - 1]].path) == 0) {
            *code = RG_ERR_FORMAT;
            snprintf(msg, msg_n, "two objects named %s (a damaged group)", im->objs[im->sorted[i]].path);
            return false;
        }
    return true;
}

/* ================================================================== the child */

void (*rg_h5i_test_hook_child)(void);

/* Runs in the child: only fd and out stay open; core dumps off; CPU time, address space and descriptors limited. */
static void child_setup(int fd, int out, const rg_h5_image_opts *o, size_t n)
{
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGXCPU, SIGPIPE, SIGALRM, SIGTERM};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        signal(sigs[i], SIG_DFL);
        sigaddset(&set, sigs[i]);
    }
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    struct rlimit nf;
    long top = getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur != RLIM_INFINITY && nf.rlim_cur < 65536
               ? (long)nf.rlim_cur : 65536;
    for (long i = 0; i < top; i++)
        if (i != fd && i != out) close((int)i);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    setrlimit(RLIMIT_FSIZE, &none);
    struct rlimit cpu = {(rlim_t)o->seconds, (rlim_t)o->seconds + 1};
    setrlimit(RLIMIT_CPU, &cpu);
    struct rlimit fds = {(rlim_t)(fd > out ? fd : out) + 1, (rlim_t)(fd > out ? fd : out) + 1};
    setrlimit(RLIMIT_NOFILE, &fds);
#ifndef RG_UNDER_ASAN
    /* what the process maps already, plus three copies of the file (ours, HDF5's image, its driver's) and the
     * dataset values, plus 512 MiB for HDF5's metadata cache and the libraries */
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    if (pages) {
        unsigned long long as = pages * (unsigned long long)sysconf(_SC_PAGESIZE) + 3ull * n + o->max_data_bytes +
                                (512ull << 20);
        struct rlimit lim = {(rlim_t)as, (rlim_t)as};
        setrlimit(RLIMIT_AS, &lim);
    }
#endif
}

/* The file's checks before a byte is read: a regular file, not empty, within the size limit, not locked by a
 * writer. *fd open on success, *n its size. */
static rg_status open_checked(const rg_h5_src *src, const rg_h5_image_opts *o, int *fd, size_t *n)
{
    *fd = open(src->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block here: refused below */
    if (*fd < 0) return rg_h5_err(src, RG_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat st;
    rg_status s = RG_OK;
    if (fstat(*fd, &st) != 0) s = rg_h5_err(src, RG_ERR_IO, "cannot stat: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode)) s = rg_h5_err(src, RG_ERR_IO, "not a regular file");
    else if (st.st_size == 0) s = rg_h5_err(src, RG_ERR_FORMAT, "empty file (0 bytes)");
    else if ((uint64_t)st.st_size > o->max_file_bytes)
        s = rg_h5_err(src, RG_ERR_FORMAT, "the file has %lld bytes, more than the %llu this reader accepts (the "
                      "largest file its limits allow: docs/checkpoint.md)", (long long)st.st_size,
                      (unsigned long long)o->max_file_bytes);
    /* HDF5 1.10 takes flock(LOCK_EX) on a file it opens for writing: the same lock, probed without waiting */
    else if (flock(*fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
        s = rg_h5_err(src, RG_ERR_IO, "cannot open: locked by another process (a writer has it open)");
    if (s) {
        close(*fd);
        *fd = -1;
        return s;
    }
    flock(*fd, LOCK_UN);
    *n = (size_t)st.st_size;
    return RG_OK;
}

/* Why the child ended as it did, when its stream was not complete. */
static rg_status child_error(const rg_h5_src *src, const reader *r, int status, const rg_h5_image_opts *o)
{
    if (r->timeout)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: reading it did not finish within %d s in the HDF5 "
                         "reader process", 2 * o->seconds);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: reading it used more than the %d s of CPU time of the "
                         "HDF5 reader process", o->seconds);
    if (WIFSIGNALED(status) && !r->malformed)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: reading it crashed the HDF5 reader process (signal %d: "
                         "%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (r->malformed)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: the HDF5 reader process sent %s", r->why);
    return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: the HDF5 reader process ended (%s %d) before it was done "
                     "(out of its memory limit?)", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

rg_status rg_h5_image_load(const rg_h5_src *src, const rg_h5_image_opts *o, rg_h5_image **out)
{
    *out = NULL;
    int fd;
    size_t n = 0;
    rg_status st = open_checked(src, o, &fd, &n);
    if (st) return st;
    int p[2];
    if (pipe(p) != 0) {
        close(fd);
        return rg_h5_err(src, RG_ERR_IO, "cannot create a pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        close(p[0]);
        close(p[1]);
        return rg_h5_err(src, RG_ERR_IO, "cannot fork the HDF5 reader process: %s", strerror(errno));
    }
    if (pid == 0) {
        child_setup(fd, p[1], o, n);
        if (rg_h5i_test_hook_child) rg_h5i_test_hook_child();
        rg_h5i_child_main(src, o, fd, n, p[1]);
        _exit(0);
    }
    close(fd);
    close(p[1]);
    rg_h5_image *im = calloc(1, sizeof *im);
    reader *r = calloc(1, sizeof *r);
    char msg[2100] = "";
    rg_status code = RG_OK;
    bool ok = false;
    if (im && r) {
        r->fd = p[0];
        r->deadline = now_s() + 2.0 * o->seconds;
        r->budget = o->max_data_bytes;
        ok = read_stream(r, im, o->max_objects, &code, msg, sizeof msg);
    }
    if (!ok || code) kill(pid, SIGKILL); /* a refusal ends the child itself; a malformed stream or a timeout not */
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!im || !r) st = rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    else if (code) st = rg_error(code, "%s", msg); /* the child's message names the file */
    else if (!ok) st = child_error(src, r, status, o);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) st = child_error(src, r, status, o);
    free(r);
    if (st) {
        rg_h5_image_free(im);
        return st;
    }
    *out = im;
    return RG_OK;
}

/* ================================================================== queries */

static const rg_h5_obj *lookup(const rg_h5_obj *loc, const char *name)
{
    const rg_h5_image *im = loc->im;
    char path[2 * RG_H5I_MAX_NAME + 2];
    if (snprintf(path, sizeof path, "%s/%s", loc->path, name) >= (int)sizeof path) return NULL;
    size_t lo = 0, hi = (size_t)im->n_objs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(im->objs[im->sorted[mid]].path, path);
        if (c == 0) return &im->objs[im->sorted[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

bool rg_h5i_exists(const rg_h5_obj *o, const char *name) { return lookup(o, name) != NULL; }

rg_status rg_h5i_open_group(const rg_h5_src *src, const rg_h5_obj *loc, const char *name, const char *full,
                            const rg_h5_obj **g)
{
    const rg_h5_obj *o = lookup(loc, name);
    *g = NULL;
    if (!o) return rg_h5_err(src, RG_ERR_FORMAT, "missing group %s", full);
    if (o->kind != RG_H5I_GROUP) return rg_h5_err(src, RG_ERR_FORMAT, "%s is not a group", full);
    *g = o;
    return RG_OK;
}

static rg_status add_names(const rg_h5_src *src, const char *full, int max_n, rg_h5_names *l, const char *name,
                           bool attrs)
{
    if (l->n >= max_n)
        return rg_h5_err(src, RG_ERR_FORMAT, "%s has more than %d %s", full, max_n, attrs ? "attributes" : "members");
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->names, (size_t)cap * sizeof *p);
        if (!p) return rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
        l->names = p;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(name))) return rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    l->n++;
    return RG_OK;
}

rg_status rg_h5i_list_links(const rg_h5_src *src, const rg_h5_obj *g, const char *full, int max_n, rg_h5_names *l)
{
    memset(l, 0, sizeof *l);
    const rg_h5_image *im = g->im;
    int gi = (int)(g - im->objs);
    rg_status st = RG_OK;
    for (int i = gi + 1; i < im->n_objs && !st; i++)
        if (im->objs[i].parent == gi) st = add_names(src, full, max_n, l, strrchr(im->objs[i].path, '/') + 1, false);
    if (st) rg_h5_names_free(l);
    return st;
}

rg_status rg_h5i_list_attrs(const rg_h5_src *src, const rg_h5_obj *o, const char *full, int max_n, rg_h5_names *l)
{
    memset(l, 0, sizeof *l);
    rg_status st = RG_OK;
    for (int i = 0; i < o->n_attrs && !st; i++) st = add_names(src, full, max_n, l, o->im->attrs[o->first_attr + i].name, true);
    if (st) rg_h5_names_free(l);
    return st;
}

static const attr *find_attr(const rg_h5_obj *o, const char *name)
{
    for (int i = 0; i < o->n_attrs; i++)
        if (strcmp(o->im->attrs[o->first_attr + i].name, name) == 0) return &o->im->attrs[o->first_attr + i];
    return NULL;
}

rg_h5_kind rg_h5i_attr_kind(const rg_h5_obj *o, const char *name)
{
    const attr *a = find_attr(o, name);
    if (!a) return RG_H5_MISSING;
    if (a->npts != 1) return RG_H5_OTHER;
    return a->cls == RG_H5I_CLS_INT ? RG_H5_INT : a->cls == RG_H5I_CLS_FLOAT ? RG_H5_FLOAT
           : a->cls == RG_H5I_CLS_STRING ? RG_H5_STRING : RG_H5_OTHER;
}

/* The attribute holding one readable value of class want (the checks of h5_attr.c's open_attr). */
static rg_status open_attr(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name,
                           unsigned want, const char *want_name, const attr **out)
{
    const attr *a = find_attr(o, name);
    *out = NULL;
    if (!a) return rg_h5_err(src, RG_ERR_FORMAT, "missing attribute '%s' on %s", name, obj);
    if (a->npts < 0 && a->err[0]) return rg_error(RG_ERR_FORMAT, "%s", a->err);
    if (a->cls != want)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s is %s, expected %s", name, obj, a->desc, want_name);
    if (a->npts != 1)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has %lld values, expected 1", name, obj,
                         (long long)a->npts);
    if (want != RG_H5I_CLS_STRING && !a->standard)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has a non-standard %s type", name, obj, a->desc);
    if (!a->has_value)
        return a->err[0] ? rg_error(RG_ERR_FORMAT, "%s", a->err)
                         : rg_h5_err(src, RG_ERR_FORMAT, "cannot read attribute '%s' on %s", name, obj);
    *out = a;
    return RG_OK;
}

rg_status rg_h5i_read_int(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, int64_t lo,
                          int64_t hi, int64_t *v)
{
    const attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_INT, "an integer", &a);
    if (st) return st;
    if (a->is_unsigned && a->bits > (uint64_t)INT64_MAX)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %llu is outside %lld..%lld", name, obj,
                         (unsigned long long)a->bits, (long long)lo, (long long)hi);
    int64_t x = (int64_t)a->bits;
    if (x < lo || x > hi)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %lld is outside %lld..%lld", name, obj,
                         (long long)x, (long long)lo, (long long)hi);
    *v = x;
    return RG_OK;
}

rg_status rg_h5i_read_u64(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, uint64_t *v)
{
    const attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_INT, "an integer", &a);
    if (st) return st;
    if (!a->is_unsigned && (int64_t)a->bits < 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %lld is negative", name, obj,
                         (long long)(int64_t)a->bits);
    *v = a->bits;
    return RG_OK;
}

rg_status rg_h5i_read_f64(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, double *v)
{
    const attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_FLOAT, "a float", &a);
    if (!st) *v = a->d;
    return st;
}

rg_status rg_h5i_read_str(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, char **v)
{
    const attr *a;
    *v = NULL;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_STRING, "a string", &a);
    if (!st && !(*v = strdup(a->s))) st = rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    return st;
}

rg_status rg_h5i_read_str_buf(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name,
                              char *buf, size_t n)
{
    const attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_STRING, "a string", &a);
    if (st) return st;
    size_t len = strlen(a->s);
    if (len >= n)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has %zu characters, at most %zu fit", name, obj,
                         len, n - 1);
    memcpy(buf, a->s, len + 1);
    return RG_OK;
}

/* True if every value of the stored type of o reads into t without loss (h5.c's reads_into). */
static bool reads_into(const rg_h5_obj *o, rg_h5_dtype t)
{
    if (!o->standard) return false;
    bool fl = o->cls == RG_H5I_CLS_FLOAT, in = o->cls == RG_H5I_CLS_INT;
    switch (t) {
    case RG_H5_FLOAT32: return fl && o->size == 4;
    case RG_H5_FLOAT64: return fl && o->size == 8;
    case RG_H5_INT32: return in && (o->is_unsigned ? o->size <= 2 : o->size <= 4);
    default: return in && o->is_unsigned;
    }
}

static rg_status open_dataset(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                              rg_h5_dtype t, int max_nd, const rg_h5_obj **out)
{
    const rg_h5_obj *d = lookup(loc, name);
    *out = NULL;
    if (!d) return rg_h5_err(src, RG_ERR_FORMAT, "missing dataset %s/%s", grp, name);
    if (d->kind != RG_H5I_DATASET) return rg_h5_err(src, RG_ERR_FORMAT, "%s/%s is not a dataset", grp, name);
    if (d->err_kind == 2 && d->nd < 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "cannot open dataset %s/%s (corrupt file?)", grp, name);
    if (!reads_into(d, t))
        return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s has dtype %s, expected %s", grp, name, d->desc,
                         rg_h5_dtype_name(t));
    if (d->nd < 1 || d->nd > max_nd)
        return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s does not have a shape of 1 to %d dimensions", grp, name,
                         max_nd);
    if (d->err_kind == 1) return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s: %s", grp, name, d->err);
    *out = d;
    return RG_OK;
}

rg_status rg_h5i_dataset_shape(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                               rg_h5_dtype t, int max_nd, int *nd, hsize_t *dims)
{
    const rg_h5_obj *d;
    rg_status st = open_dataset(src, loc, grp, name, t, max_nd, &d);
    if (st) return st;
    *nd = d->nd;
    memcpy(dims, d->dims, (size_t)d->nd * sizeof *dims);
    return RG_OK;
}

/* The stored values of d (native form of its type) into buf as t. */
static void convert(const rg_h5_obj *d, rg_h5_dtype t, void *buf)
{
    size_t n = d->nbytes / d->size;
    if (t == RG_H5_FLOAT32 || t == RG_H5_FLOAT64 || (t == RG_H5_INT32 && d->size == 4) ||
        (t == RG_H5_UINT64 && d->size == 8)) {
        memcpy(buf, d->data, d->nbytes);
        return;
    }
    const unsigned char *p = d->data;
    for (size_t i = 0; i < n; i++) {
        int64_t s = 0;
        uint64_t u = 0;
        switch (d->size) {
        case 1: s = d->is_unsigned ? (int64_t)p[i] : (int64_t)((const int8_t *)p)[i]; break;
        case 2: s = d->is_unsigned ? (int64_t)((const uint16_t *)p)[i] : (int64_t)((const int16_t *)p)[i]; break;
        case 4: u = ((const uint32_t *)p)[i]; s = (int64_t)u; break;
        default: break;
        }
        if (t == RG_H5_INT32) ((int32_t *)buf)[i] = (int32_t)s;
        else ((uint64_t *)buf)[i] = d->size == 4 ? u : (uint64_t)s;
    }
}

rg_status rg_h5i_read_dataset(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                              rg_h5_dtype t, int nd, const hsize_t *dims, void *buf)
{
    const rg_h5_obj *d;
    rg_status st = open_dataset(src, loc, grp, name, t, RG_H5I_MAX_ND, &d);
    if (st) return st;
    bool same = d->nd == nd;
    for (int i = 0; same && i < nd; i++) same = d->dims[i] == dims[i];
    if (!same) {
        char a[200], b[200];
        rg_h5_shape_str(d->nd, d->dims, a, sizeof a);
        rg_h5_shape_str(nd, dims, b, sizeof b);
        return rg_h5_err(src, RG_ERR_SHAPE, "dataset %s/%s has shape %s, expected %s", grp, name, a, b);
    }
    if (d->err_kind == 2)
        return rg_h5_err(src, RG_ERR_FORMAT, "cannot read dataset %s/%s (truncated or corrupt file, or a checksum "
                         "mismatch): %s", grp, name, d->err);
    if (!d->has_data)
        return rg_h5_err(src, RG_ERR_ARG, "dataset %s/%s: its values were not asked for when the file was read",
                         grp, name);
    convert(d, t, buf);
    return RG_OK;
}
