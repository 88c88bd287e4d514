/* h5_image_impl.h: the layout of an rg_h5_image (h5_image.h), shared by h5_image.c (which builds it from the
 * reader process's stream) and h5_image_query.c (which answers the loaders' queries). Not a public header. */
#ifndef RG_IO_H5_IMAGE_IMPL_H
#define RG_IO_H5_IMAGE_IMPL_H

#include "h5_image.h"

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
} rg_h5i_attr;

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
    rg_h5i_attr *attrs;
    int n_attrs, cap_attrs;
    int *sorted; /* object indices by path */
};

#endif
