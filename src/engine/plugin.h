/* plugin.h: plugins for the engine's programs (installed as <ropegrad/engine/plugin.h>). A plugin is a shared
 * library that registers position encodings (rg_pos_register) and tasks (rg_task_register) in a program built on
 * rg_engine_main, e.g. the stock train_order:
 *
 *     train_order --plugin ./xpos_addition.so --task addition --pos xpos,rope,alibi
 *     ROPEGRAD_PLUGINS=./a.so:./b.so train_order ...        (a ':'-separated list, loaded before the flags' ones)
 *
 * The plugin's source has exactly two things at file scope (examples/plugin_xpos_addition.c is the worked example):
 *
 *     #include <ropegrad/engine/plugin.h>
 *     RG_PLUGIN_MAGIC;
 *     rg_status rg_plugin_init(void) { return rg_pos_register(&MY_ENCODING, NULL); }
 *
 * and is built against the same installed headers as the program, without linking the library (the program
 * provides it):
 *
 *     cc -shared -fPIC -std=c11 $(pkg-config --cflags ropegrad) my_plugin.c -o my_plugin.so
 *
 * The model is PostgreSQL's PG_MODULE_MAGIC with _PG_init, and Lua's luaopen_*: RG_PLUGIN_MAGIC emits a constant
 * record, rg_plugin_magic, of the headers the plugin was compiled with (the library's version, the plugin ABI, the
 * element type float32 / float64, the sizes of the descriptors). The program reads that record as DATA after dlopen
 * (only a data symbol of at least the record's size: another object of that name is refused unread)
 * and refuses the plugin, before any of its functions is called, when it was built for another version (major, and
 * minor while the major is 0, as the soname) or another precision, naming both; only then does it call
 * rg_plugin_init. (dlopen itself runs a library's ELF constructors: a plugin must not have any.) A plugin compiled
 * with -DRG_DOUBLE refers to the float64 build guard (version.h), which the float32 program does not define: dlopen
 * fails with "undefined symbol: rg_build_float64", and the program says so in the same terms.
 *
 * The program records which plugin (file name and SHA-256 of the file) registered each encoding and task; a
 * checkpoint of such an encoding or task keeps that record in its /run group, and --eval / --resume of it without the
 * plugin loaded names the --plugin to pass. Nothing is ever loaded because a file names it: a checkpoint is data.
 * Under MPI every rank loads the same plugins (the command line and environment are the same) and rank 0 checks
 * every rank's digests at start.
 */
#ifndef RG_ENGINE_PLUGIN_H
#define RG_ENGINE_PLUGIN_H

#include "../ropegrad.h"
#include "../task/task.h"

/* The plugin ABI: bumped when the contract between a program and its plugins changes (the entry point, the magic
 * record's layout). */
#define RG_PLUGIN_ABI 1

/* The record a plugin carries (RG_PLUGIN_MAGIC): what its headers were. */
typedef struct {
    char tag[8];            /* "rgplug" */
    int abi;                /* RG_PLUGIN_ABI */
    int version_major, version_minor, version_patch; /* RG_VERSION_* of the headers */
    int real_bytes;         /* sizeof(rg_real): 4 (float32 build) or 8 (-DRG_DOUBLE, float64) */
    int pos_desc_bytes;     /* sizeof(rg_pos_encoding): a descriptor of another layout is refused too */
    int task_desc_bytes;    /* sizeof(rg_task_desc) */
} rg_plugin_magic_t;

/* Put once, at file scope, in the plugin's source. */
#define RG_PLUGIN_MAGIC                                                                                            \
    __attribute__((visibility("default"))) extern const rg_plugin_magic_t rg_plugin_magic;                         \
    const rg_plugin_magic_t rg_plugin_magic = {"rgplug", RG_PLUGIN_ABI, RG_VERSION_MAJOR, RG_VERSION_MINOR,        \
                                               RG_VERSION_PATCH, (int)sizeof(rg_real),                             \
                                               (int)sizeof(rg_pos_encoding), (int)sizeof(rg_task_desc)}

/* The plugin's entry point, defined by the plugin: registers its encodings and tasks. Called once, after the magic
 * record was accepted and before the command line's other options are read (so --pos and --task take its names).
 * Returns RG_OK, or an error status with rg_error's message (the program then stops with exit status 1, naming the
 * plugin and the message, or saying that it gave none). */
__attribute__((visibility("default"))) rg_status rg_plugin_init(void); /* exported under -fvisibility=hidden too */

#endif
