/* version.h: the library's version (RG_VERSION, rg_version) and the guard that keeps the float32 and float64
 * builds apart. Included by tensor.h, so by every public header.
 *
 * Build guard: every translation unit that includes a ropegrad header refers to rg_build_float32 (or, compiled with
 * -DRG_DOUBLE, rg_build_float64), and only the library of that build defines it (libropegrad.a / libropegrad.so
 * the first, libropegrad_f64.a the second). Mixing float32 headers with the float64 library, or the reverse,
 * fails to link: "undefined reference to `rg_build_float32'" means "compiled without -DRG_DOUBLE but linked
 * against libropegrad_f64.a" (use `pkg-config ropegrad-f64`, which adds -DRG_DOUBLE, or link libropegrad);
 * "`rg_build_float64'" the reverse. */
#ifndef RG_VERSION_H
#define RG_VERSION_H

#define RG_VERSION_MAJOR 0
#define RG_VERSION_MINOR 21
#define RG_VERSION_PATCH 0
/* The version as text, "MAJOR.MINOR.PATCH" (the shared library is libropegrad.so.MAJOR.MINOR.PATCH, soname
 * libropegrad.so.MAJOR.MINOR while MAJOR is 0). */
#define RG_VERSION "0.21.0"
/* The version as one comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define RG_VERSION_NUMBER (RG_VERSION_MAJOR * 10000 + RG_VERSION_MINOR * 100 + RG_VERSION_PATCH)

/* The version of the library linked in ("0.21.0"), which may differ from the headers' RG_VERSION with a shared
 * library. Never NULL. */
const char *rg_version(void);
/* The element type of the library linked in: "float32" or "float64". Never NULL. */
const char *rg_build_real(void);

#ifdef RG_DOUBLE
extern const int rg_build_float64;
#if defined(__GNUC__)
__attribute__((used)) static const int *const rg_build_guard_ = &rg_build_float64;
#endif
#else
extern const int rg_build_float32;
#if defined(__GNUC__)
__attribute__((used)) static const int *const rg_build_guard_ = &rg_build_float32;
#endif
#endif

#endif
