/* h5.h: the HDF5 layer shared by the checkpoints (checkpoint.c) and the evaluation-set file (task.c): HDF5's error
 * printing switched off, files read into memory and opened from there, typed scalar and string attributes, and
 * datasets written and read with their dtype and shape checked.
 *
 * Every reader returns an rg_status with rg_last_error() set to "<what> <path>: <message>", where what/path come
 * from an rg_h5_src ("checkpoint", "/runs/a/ckpt.h5"). Writers return a negative herr_t on failure (HDF5's own
 * description is on its error stack: rg_h5_detail). Values read from a file are user input: every reader checks
 * the HDF5 class, size and sign of the stored type and reads 64-bit values as 64-bit, so nothing is converted
 * silently (an int64 2^32+55 never becomes 55, a uint64 above INT64_MAX never becomes negative).
 *
 * Errors: RG_ERR_FORMAT (missing, wrongly typed or shaped object, a value outside the range asked for, a string
 * that is not valid UTF-8 or holds a NUL), RG_ERR_SHAPE (a dataset of another shape), RG_ERR_IO (cannot open or
 * read the file; locked by a writer), RG_ERR_NOMEM.
 *
 * Two files implement it: h5.c (errors, files, datatypes, groups, datasets) and h5_attr.c (attributes). */
#ifndef RG_IO_H5_H
#define RG_IO_H5_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../tensor/tensor.h"

/* ------------------------------------------------------------------ errors */

/* HDF5 prints its error stack to stderr by default; rg_h5_quiet_begin switches that off and rg_h5_quiet_end
 * restores the previous handler (call them around every public function that uses HDF5). */
typedef struct {
    H5E_auto2_t func;
    void *data;
} rg_h5_quiet;
void rg_h5_quiet_begin(rg_h5_quiet *q);
void rg_h5_quiet_end(const rg_h5_quiet *q);

/* The innermost description on HDF5's current error stack (the most specific), or "": call it right after the
 * failing HDF5 call. Writes into buf (n bytes) and returns it. */
const char *rg_h5_detail(char *buf, size_t n);

/* Names the file in messages: "<what> <path>: ". */
typedef struct {
    const char *what;
    const char *path;
} rg_h5_src;

/* rg_error(code, "<what> <path>: <fmt ...>"); returns code. */
rg_status rg_h5_err(const rg_h5_src *src, rg_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ files */

/* Reads the whole file src->path into a malloc'ed buffer (*buf, *n bytes; free it). Refuses, before reading: a
 * missing path or one that is not a regular file (RG_ERR_IO, strerror text), an empty file (RG_ERR_FORMAT), a file
 * that another process holds open for writing through HDF5's file lock (RG_ERR_IO "locked by another process":
 * an explicit flock(LOCK_SH | LOCK_NB) probe, EWOULDBLOCK; file systems without flock are not probed). */
rg_status rg_h5_read_file(const rg_h5_src *src, unsigned char **buf, size_t *n);

/* Opens the HDF5 file image buf[0..n) (a file read with rg_h5_read_file) read-only from memory (HDF5's core
 * driver; HDF5 copies the image). RG_ERR_FORMAT "not an HDF5 file" when no HDF5 signature is found at offset 0,
 * 512, 1024, ... (a user block), or with HDF5's innermost message when it cannot be opened (truncated, corrupt). */
rg_status rg_h5_open_image(const rg_h5_src *src, const unsigned char *buf, size_t n, hid_t *file);

/* Creates an empty HDF5 file in memory (core driver: nothing is written to disk; rg_h5_memory_image gives its
 * bytes) with the file creation properties fcpl (H5P_DEFAULT, or a list setting e.g. a user block) and HDF5's
 * default (oldest, most widely readable) format. Returns the file id or < 0. */
hid_t rg_h5_create_memory(hid_t fcpl);

/* Flushes the in-memory file f and returns its bytes as a file (malloc'ed, *n bytes), or NULL. HDF5's image
 * starts at the superblock: the first `userblock` bytes (the user block size of the file's fcpl, or 0) are zeros
 * for the caller to fill. Does not close f. */
unsigned char *rg_h5_memory_image(hid_t f, size_t userblock, size_t *n);

/* Closes every object still open in file f, then f itself (so that no error path leaves HDF5 with an open file at
 * exit). Returns < 0 if the final close failed. */
herr_t rg_h5_close_file(hid_t f);

/* ------------------------------------------------------------------ datatypes (h5.c) */

/* "float64", "uint32", "a string", "a compound", ... for the HDF5 datatype t, into buf (n bytes): the stored type
 * as messages name it. */
void rg_h5_type_desc(hid_t t, char *buf, size_t n);

/* True if t is one of HDF5's standard IEEE float or two's-complement integer types (either byte order): a type
 * with an odd precision, offset or layout (a damaged datatype message) is refused rather than converted. */
bool rg_h5_standard_number(hid_t t);

/* ------------------------------------------------------------------ attributes: writing (h5_attr.c) */

/* Every writer creates attribute `name` on loc (failing, < 0, if it exists) and returns < 0 on failure with HDF5's
 * description on its error stack; nothing is left open. */

/* Scalar attributes. file_type: the stored type (H5T_STD_I32LE, H5T_STD_I64LE, ...); the value is converted by
 * HDF5 from the 64-bit one given (the caller keeps it in range). */
herr_t rg_h5_write_int(hid_t loc, const char *name, hid_t file_type, int64_t v);
/* A scalar uint64 attribute (stored as H5T_STD_U64LE). */
herr_t rg_h5_write_u64(hid_t loc, const char *name, uint64_t v);
/* A scalar float64 attribute (stored as H5T_IEEE_F64LE). */
herr_t rg_h5_write_f64(hid_t loc, const char *name, double v);
/* A 1-D integer attribute of count values (stored as file_type). */
herr_t rg_h5_write_ints(hid_t loc, const char *name, hid_t file_type, const int64_t *v, hsize_t count);
/* A fixed-length, NUL-terminated string of any length: character set ASCII when every byte is < 0x80, else UTF-8
 * (h5py returns str for UTF-8, bytes for ASCII). */
herr_t rg_h5_write_str(hid_t loc, const char *name, const char *v);

/* ------------------------------------------------------------------ attributes: reading (h5_attr.c) */

typedef enum { RG_H5_MISSING = 0, RG_H5_INT, RG_H5_FLOAT, RG_H5_STRING, RG_H5_OTHER } rg_h5_kind;

/* The kind of attribute `name` of loc (RG_H5_MISSING if there is none; RG_H5_OTHER for compound, array, ... or
 * an attribute that is not a single value). */
rg_h5_kind rg_h5_attr_kind(hid_t loc, const char *name);

/* A scalar integer attribute (any integer type of at most 64 bits, signed or unsigned), range-checked: lo <= v <=
 * hi. `obj` names the object in messages ("/config"). RG_ERR_FORMAT: missing ("missing attribute 'k' on /x"), not
 * one integer ("attribute 'k' on /x is float64, expected an integer"), outside [lo, hi] (both named). */
rg_status rg_h5_read_int(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, int64_t lo, int64_t hi,
                         int64_t *v);
/* A scalar unsigned 64-bit value: any integer type whose value is >= 0. */
rg_status rg_h5_read_u64(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, uint64_t *v);
/* A scalar float attribute (float32 or float64), read as double. NaN and infinities are returned as they are:
 * range checks are the caller's. */
rg_status rg_h5_read_f64(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, double *v);
/* A scalar string attribute of any length: fixed-length (NUL-terminated, NUL-padded or space-padded) or
 * variable-length (h5py's str), character set ASCII or UTF-8. *v is malloc'ed (free it). RG_ERR_FORMAT for a
 * string holding a NUL byte or invalid UTF-8. */
rg_status rg_h5_read_str(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, char **v);
/* The same into buf (n bytes); RG_ERR_FORMAT naming both lengths if it does not fit. */
rg_status rg_h5_read_str_buf(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, char *buf,
                             size_t n);
/* True if s[0..n) is valid UTF-8 (ASCII included) without NUL bytes. */
bool rg_h5_valid_utf8(const unsigned char *s, size_t n);

/* ------------------------------------------------------------------ groups (h5.c) */

/* True if loc has a link `name` (a path relative to loc whose parents exist); false when missing or on error. */
bool rg_h5_exists(hid_t loc, const char *name);
/* Opens group `name` of loc (`full`: its path for messages). RG_ERR_FORMAT if missing or not a group. */
rg_status rg_h5_open_group(const rg_h5_src *src, hid_t loc, const char *name, const char *full, hid_t *g);
/* Creates a group whose links (and attributes) remember their creation order. Returns the id or < 0. */
hid_t rg_h5_create_group(hid_t loc, const char *name);

typedef struct {
    char **names;
    int n, cap;
} rg_h5_names;
/* Frees the names and the list, leaving l empty (safe on an empty or already freed list). */
void rg_h5_names_free(rg_h5_names *l);
/* The names of the links of group g (creation order if tracked, else by name); at most max_n (more:
 * RG_ERR_FORMAT). */
rg_status rg_h5_list_links(const rg_h5_src *src, hid_t g, const char *full, int max_n, rg_h5_names *l);
/* The names of the attributes of object o, in the same way. */
rg_status rg_h5_list_attrs(const rg_h5_src *src, hid_t o, const char *full, int max_n, rg_h5_names *l);

/* ------------------------------------------------------------------ datasets (h5.c) */

typedef enum { RG_H5_FLOAT32 = 0, RG_H5_FLOAT64, RG_H5_INT32, RG_H5_UINT64 } rg_h5_dtype;
/* "float32", "float64", "int32", "uint64": t as messages name it. */
const char *rg_h5_dtype_name(rg_h5_dtype t);

enum {
    RG_H5_CHECKSUM = 1, /* one chunk with the Fletcher-32 checksum filter (HDF5 verifies it on every read) */
    RG_H5_COMPRESS = 2, /* one chunk, shuffle + deflate 9 */
    RG_H5_NO_TIMES = 4  /* no modification time (byte-reproducible files) */
};

/* Writes dataset `name` of loc: dtype t, shape dims[0..nd), C-order data in the native type of t. Datasets of
 * 1 GiB or more are stored contiguous (HDF5 chunks are limited to 4 GiB) whatever the flags. */
herr_t rg_h5_write_dataset(hid_t loc, const char *name, rg_h5_dtype t, int nd, const hsize_t *dims, const void *data,
                           unsigned flags);

/* The shape of dataset `name` of loc (`grp`: the group's path for messages, "" for the root): checks that it
 * exists ("missing dataset <grp>/<name>"), is a dataset, has a simple shape of at most max_nd dims and a stored
 * type that reads into t without loss ("dataset <grp>/<name> has dtype float64, expected float32"; integers:
 * any integer type whose every value fits). */
rg_status rg_h5_dataset_shape(const rg_h5_src *src, hid_t loc, const char *grp, const char *name, rg_h5_dtype t,
                              int max_nd, int *nd, hsize_t *dims);
/* Reads dataset `name` (checked as rg_h5_dataset_shape) into buf, which holds the product of dims values of t;
 * RG_ERR_SHAPE "dataset <grp>/<name> has shape [a, b], expected [c, d]" if the shape differs. Read errors
 * (a checksum mismatch, a truncated file) are RG_ERR_FORMAT with HDF5's innermost message. */
rg_status rg_h5_read_dataset(const rg_h5_src *src, hid_t loc, const char *grp, const char *name, rg_h5_dtype t,
                             int nd, const hsize_t *dims, void *buf);

/* "[32, 16]" into buf. */
void rg_h5_shape_str(int nd, const hsize_t *dims, char *buf, size_t n);

#endif
