/* guard.c: see guard.h. */
#include "guard.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

uint32_t rg_crc32(uint32_t crc, const void *p, size_t n)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    const unsigned char *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static const char magic[] = "ropegrad-digest 1\n";

/* The canonical digest block for crc and length n. */
static void make_block(uint32_t crc, size_t n, unsigned char *block)
{
    memset(block, 0, RG_GUARD_BLOCK);
    snprintf((char *)block, RG_GUARD_BLOCK,
             "%scrc32 %08" PRIx32 "\nbytes %zu\n"
             "The CRC-32 (zlib.crc32) of the bytes after this 512-byte block, checked by the ropegrad loader before "
             "HDF5 reads the file (docs/checkpoint.md).\n",
             magic, crc, n);
}

void rg_guard_seal(unsigned char *buf, size_t n)
{
    make_block(rg_crc32(0, buf + RG_GUARD_BLOCK, n - RG_GUARD_BLOCK), n, buf);
}

rg_status rg_guard_verify(const rg_h5_src *src, const unsigned char *buf, size_t n, bool *sealed)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    *sealed = false;
    if (n >= 8 && memcmp(buf, sig, 8) == 0) return RG_OK;
    size_t ml = sizeof magic - 1;
    if (n < ml || memcmp(buf, magic, ml) != 0) {
        if (n >= RG_GUARD_BLOCK + 8 && memcmp(buf + RG_GUARD_BLOCK, sig, 8) == 0)
            return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: its %d-byte user block is not a ropegrad digest "
                             "block (damaged, or added by another tool)", RG_GUARD_BLOCK);
        return rg_h5_err(src, RG_ERR_FORMAT, "not an HDF5 file (no HDF5 signature in its %zu bytes)", n);
    }
    unsigned long long rec_n = 0;
    unsigned rec_crc = 0;
    char line[64];
    memcpy(line, buf + ml, sizeof line - 1 < n - ml ? sizeof line - 1 : n - ml);
    line[sizeof line - 1 < n - ml ? sizeof line - 1 : n - ml] = 0;
    if (sscanf(line, "crc32 %8x\nbytes %llu\n", &rec_crc, &rec_n) != 2)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: damaged digest block");
    if (rec_n != n)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: %zu bytes, but its digest block records %llu "
                         "(truncated or extended)", n, rec_n);
    uint32_t crc = rg_crc32(0, buf + RG_GUARD_BLOCK, n - RG_GUARD_BLOCK);
    if (crc != rec_crc)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: its bytes have CRC-32 %08" PRIx32 ", its digest block "
                         "records %08x (damaged, or edited after saving: see docs/checkpoint.md, \"Edited files\")",
                         crc, rec_crc);
    unsigned char want[RG_GUARD_BLOCK];
    make_block(crc, n, want);
    if (memcmp(want, buf, RG_GUARD_BLOCK) != 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "corrupt file: damaged digest block");
    *sealed = true;
    return RG_OK;
}
