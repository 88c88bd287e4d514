/* h5_image.c: see h5_image.h. The parent's side of rg_h5_image_load: the file checks before any byte is read, the
 * child process and its limits, the strict reading of its stream (h5_walk.c documents the records) into an image,
 * (the queries the loaders make of it are in h5_image_query.c). Nothing here calls HDF5 on the file. */
#include "h5_image_impl.h"

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

/* ================================================================== the image (h5_image_impl.h) */

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
        rg_h5i_attr *p = realloc(im->attrs, (size_t)cap * sizeof *p);
        if (!p) return bad(r, "out of memory");
        im->attrs = p;
        im->cap_attrs = cap;
    }
    rg_h5i_attr *a = &im->attrs[im->n_attrs++];
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

