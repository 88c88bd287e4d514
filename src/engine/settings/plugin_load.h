/* plugin_load.h: the engine's plugin loader (plugin_load.c; the plugin's side is the installed plugin.h): loading the
 * libraries named by --plugin and $ROPEGRAD_PLUGINS, the record of which plugin registered which encoding and task,
 * and their digests (SHA-256 of the file). Engine-internal. */
#ifndef ENG_PLUGIN_LOAD_H
#define ENG_PLUGIN_LOAD_H

#include "nn/pos.h"
#include "task/task.h"

#include <stdio.h>

#define ENG_PLUGIN_MAX 16

typedef struct {
    char path[1024];          /* as given */
    char file[256];           /* its base name: what messages and checkpoints name */
    char sha256[65];          /* of the file's bytes, lower-case hex */
    int pos_first, pos_end;   /* the encoding ids it registered: [pos_first, pos_end) */
    int task_first, task_end; /* the task ids it registered */
} eng_plugin;


/* Loads every plugin of $ROPEGRAD_PLUGINS (':'-separated), then of every --plugin PATH / --plugin=PATH of argv, in
 * that order, before the options are parsed (so that --pos and --task take the plugins' names). A file loaded twice
 * (the same digest) is loaded once. Prints a message naming the file and the reason and exits: 2 for every file
 * refused before its rg_plugin_init runs (it cannot be read, dlopen fails, whatever the reason: not ELF, too short,
 * another architecture, a missing library; no rg_plugin_magic of the record's size or no rg_plugin_init; built for
 * another version, layout or precision); 1 when the plugin's rg_plugin_init fails (its message, or that it gave
 * none: the thread's message is cleared before the call). */
void eng_plugins_load(int argc, char **argv);
/* 0 when path (a --plugin value seen by the parser) was loaded by eng_plugins_load, else -1. */
int eng_plugin_loaded(const char *path);

/* The plugins loaded as one line of "FILE:SHA256-PREFIX" items (what MPI ranks compare, mpi_transport.c), into buf. */
void eng_plugins_fingerprint(char *buf, size_t cap);

/* --help's lines on the plugins loaded (file, digest, the encodings and tasks each registered); nothing without. */
void eng_plugins_usage(FILE *f);

/* The plugins loaded, in order. */
int eng_plugin_count(void);
const eng_plugin *eng_plugin_at(int i);
/* The plugin that registered encoding id / task id, or NULL (a built-in, or the program's own). */
const eng_plugin *eng_plugin_of_pos(int id);
const eng_plugin *eng_plugin_of_task(int id);

/* The checkpoint's record of the plugins behind a run: the /run string attribute ENG_PLUGIN_ATTR, one line per
 * encoding or task a plugin registered, "encoding NAME FILE sha256:HEX" / "task NAME FILE sha256:HEX" (absent when
 * neither came from a plugin). eng_plugin_record writes it for the run of encoding pos and task (0, or -1 with
 * rg_last_error). eng_plugin_hint reads a checkpoint's record before --eval / --resume builds anything: an encoding
 * or task it names that is not registered stops the program with exit status 2 and a message naming the plugin's
 * file and digest and the --plugin to pass; a registered one from a plugin of another digest gets a note. */
#define ENG_PLUGIN_ATTR "plugins"
struct rg_run_state;
int eng_plugin_record(struct rg_run_state *rs, int pos, int task);
void eng_plugin_hint(const char *ckpt, const char *flag);

/* SHA-256 of the file at path into hex[65]. 0, or -1 (errno set) if it cannot be read. */
int eng_sha256_file(const char *path, char hex[65]);

#endif
