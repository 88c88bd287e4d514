/* h5_image.h: an HDF5 file parsed out of process (a crafted file must not crash the program; docs/checkpoint.md "Parsing out of process").
 *
 * rg_h5_image_load forks a child process that opens the file with HDF5 under resource limits, walks every group,
 * dataset and attribute, checks each dataset's storage (every chunk allocated, of its exact size) and serializes
 * plain checked values over a pipe: for every object its path and kind; for every attribute its name, stored type
 * (class, description, one value or how many), and its value (64-bit integer, double, or string); for every
 * dataset its stored type, shape and, when asked for, its values in the stored type's native form. The parent reads
 * that stream with strict bounds (every length checked before anything is allocated) into an rg_h5_image, and the
 * loaders (checkpoint.c, task.c) query the image: the parent process never calls HDF5 on the file. A crash, hang,
 * signal or resource limit in the child is a clean RG_ERR_FORMAT naming the file.
 *
 * The queries mirror the in-process readers of h5.h (same checks, same messages) with an object of the image
 * (const rg_h5_obj *) in place of an HDF5 id; `src` names the file in messages ("checkpoint /runs/a/ckpt.h5: ...").
 *
 * Errors of rg_h5_image_load: RG_ERR_IO (missing, not a regular file, locked by a writer, fork or pipe failed),
 * RG_ERR_FORMAT (larger than opts->max_file_bytes, empty, not HDF5, a digest block that does not match, more
 * objects or data than the limits, the child crashed / was killed / ran past its time or memory limit, a stream
 * the parent cannot parse), RG_ERR_NOMEM. */
#ifndef RG_IO_H5_IMAGE_H
#define RG_IO_H5_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "h5.h"

#define RG_H5I_MAX_DEPTH 16        /* group nesting */
#define RG_H5I_MAX_NAME 1024       /* bytes of a path or attribute name */
#define RG_H5I_MAX_STR (1 << 20)   /* bytes of a string attribute value */
#define RG_H5I_MAX_ND 8            /* dataset rank */
#define RG_H5I_MAX_CHUNKS (1 << 20) /* chunks of one dataset */

typedef struct {
    /* datasets whose values are sent: paths starting with one of these prefixes ("/copy/n16/"), NULL-terminated;
     * NULL: every dataset. The others are sent with their type, shape and storage check only. */
    const char *const *data_prefixes;
    uint64_t max_file_bytes;   /* the file's size, checked (fstat) before any byte is read */
    uint64_t max_data_bytes;   /* sum of the bytes of the datasets sent (after decompression) */
    int max_objects;           /* groups + datasets + attributes */
    int seconds;               /* CPU and wall-clock limit of the child */
    bool skip_digest;          /* true: a digest block is not verified (rg_checkpoint_seal) */
} rg_h5_image_opts;

typedef struct rg_h5_image rg_h5_image;
typedef struct rg_h5_obj rg_h5_obj;

/* Parses src->path in a child process (above) into *out (free with rg_h5_image_free). A file starting with a
 * ropegrad digest block (guard.h) must match it (unless opts->skip_digest). */
rg_status rg_h5_image_load(const rg_h5_src *src, const rg_h5_image_opts *opts, rg_h5_image **out);
void rg_h5_image_free(rg_h5_image *im);
/* The root group. */
const rg_h5_obj *rg_h5_image_root(const rg_h5_image *im);

/* True if o has a link `name` (a path relative to o, "optim/exp_avg"). */
bool rg_h5i_exists(const rg_h5_obj *o, const char *name);
/* Group `name` of loc (`full`: its path for messages). RG_ERR_FORMAT if missing or not a group. */
rg_status rg_h5i_open_group(const rg_h5_src *src, const rg_h5_obj *loc, const char *name, const char *full,
                            const rg_h5_obj **g);
/* The member names of group g (creation order when the file tracks it, else by name), at most max_n. */
rg_status rg_h5i_list_links(const rg_h5_src *src, const rg_h5_obj *g, const char *full, int max_n, rg_h5_names *l);
/* The attribute names of o, at most max_n. */
rg_status rg_h5i_list_attrs(const rg_h5_src *src, const rg_h5_obj *o, const char *full, int max_n, rg_h5_names *l);

/* As rg_h5_attr_kind, rg_h5_read_int, _u64, _f64, _str, _str_buf (h5.h): same checks, same messages. */
rg_h5_kind rg_h5i_attr_kind(const rg_h5_obj *o, const char *name);
rg_status rg_h5i_read_int(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, int64_t lo,
                          int64_t hi, int64_t *v);
rg_status rg_h5i_read_u64(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, uint64_t *v);
rg_status rg_h5i_read_f64(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, double *v);
rg_status rg_h5i_read_str(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, char **v);
rg_status rg_h5i_read_str_buf(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name,
                              char *buf, size_t n);

/* As rg_h5_dataset_shape and rg_h5_read_dataset (h5.h). Also RG_ERR_FORMAT naming the dataset when its storage is
 * incomplete ("dataset /params/w has 0 of its 1 chunks allocated": HDF5 would read the missing ones as the fill
 * value, silently), when HDF5 failed to read it in the child (checksum mismatch), or when its values were not
 * asked for (data_prefixes). Integer datasets are widened to t (int32, uint64) exactly as HDF5 would. */
rg_status rg_h5i_dataset_shape(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                               rg_h5_dtype t, int max_nd, int *nd, hsize_t *dims);
rg_status rg_h5i_read_dataset(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                              rg_h5_dtype t, int nd, const hsize_t *dims, void *buf);

/* Test hook (tests only): when set, called in the child process after its limits are set, before it reads the
 * file (a test makes it crash, spin or allocate to see the parent's clean error). */
extern void (*rg_h5i_test_hook_child)(void);

/* ------------------------------------------------------------------ internal: shared by h5_image.c, h5_walk.c */

/* The child's side: opens fd (the file, size n), writes the stream to out_fd; returns when done (the caller
 * _exits). */
void rg_h5i_child_main(const rg_h5_src *src, const rg_h5_image_opts *opts, int fd, size_t n, int out_fd);

enum { RG_H5I_MAGIC = 0x35684752u /* "RGh5" */ };
/* stream records: a one-byte tag, then the fields listed in h5_walk.c */
enum { RG_H5I_REC_OBJ = 'O', RG_H5I_REC_ATTR = 'A', RG_H5I_REC_ERR = 'E', RG_H5I_REC_END = 'Z' };
/* object kinds */
enum { RG_H5I_GROUP = 1, RG_H5I_DATASET = 2, RG_H5I_OTHER = 3 };
/* type classes in the stream */
enum { RG_H5I_CLS_INT = 0, RG_H5I_CLS_FLOAT = 1, RG_H5I_CLS_STRING = 2, RG_H5I_CLS_OTHER = 3 };

#endif
