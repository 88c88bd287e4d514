/* main.c: examples/train_order, the length-extrapolation experiment (issue 7). Parses the command line
 * (getopt_long), runs the grid of (task, encoding, seed) runs in parallel jobs (fork, one process per run), and
 * writes the report. Exit status: 0 on success, 1 on any failed run or output, 2 on a bad command line (nothing
 * written). */
#include "train_order.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
"usage: train_order [options]\n"
"Trains the reference transformer on copy/reverse/sort with n <= --train-len and reports exact-match accuracy at\n"
"longer test lengths for each position encoding.\n\n"
"  --task T          copy | reverse | sort | all, or a comma list            (default copy)\n"
"  --pos LIST        none,sinusoidal,learned,t5,xl,alibi,rope,rope-half | all  (default all)\n"
"  --seeds N         seeds 1..N per (task, encoding)                         (default 1)\n"
"  --steps N         training steps                                          (default 3000)\n"
"  --batch N         batch size                                              (default 64)\n"
"  --lr X            peak AdamW learning rate                                (default 1e-3)\n"
"  --train-len N     longest training n (sequences of 2n+3 tokens)           (default 16)\n"
"  --test-lens LIST  comma list of test n, each in the data file             (default 8,16,24,32,48,64)\n"
"  --rope-ext LIST   pi,ntk,yarn,llama3 | all | none: RoPE rows evaluated with each extension beyond the\n"
"                    training length, s = (2n+3)/(2 train_len+3)              (default all)\n"
"  --random-positions  train on sorted random positions from [0, max_len) (Ruoss et al. 2023)\n"
"  --micro-batches K split each batch into K micro-batches of rows sorted by length (the same samples\n"
"                    and loss; each padded to its own longest row)            (default 8)\n"
"  --threads N       OpenBLAS threads per run                                (default 1)\n"
"  --jobs N          runs in parallel                                        (default: online CPUs)\n"
"  --out DIR         output folder                                           (default out)\n"
"  --data FILE       evaluation sets                                         (default data/eval_sets.h5)\n"
"  --resume CKPT     continue a run from its checkpoint to --steps, then evaluate\n"
"  --eval CKPT       evaluate a saved checkpoint only\n"
"  --quiet           no progress output\n"
"  --help            this text\n");
}

static int bad(const char *fmt, const char *arg, const char *allowed)
{
    fprintf(stderr, "train_order: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n  allowed: %s\n  (train_order --help lists every option)\n", allowed);
    exit(2);
}

static int parse_int(const char *opt, const char *s, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        char allowed[64];
        snprintf(allowed, sizeof allowed, "an integer from %d to %d", lo, hi);
        fprintf(stderr, "train_order: %s: '%s' is not valid\n  allowed: %s\n", opt, s, allowed);
        exit(2);
    }
    return (int)v;
}

static double parse_double(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > lo) || v > hi) {
        fprintf(stderr, "train_order: %s: '%s' is not valid\n  allowed: a number in (%g, %g]\n", opt, s, lo, hi);
        exit(2);
    }
    return v;
}

/* Splits a comma list in place into items (at most 64); an empty item ("8,,16", a trailing comma) is an error. */
static int split_list(const char *opt, char *list, char **items)
{
    int n = 0;
    for (char *p = list;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (!*p || n == 64) {
            fprintf(stderr, "train_order: %s: empty item or too many items in the list\n"
                            "  allowed: a comma list of up to 64 non-empty items\n", opt);
            exit(2);
        }
        items[n++] = p;
        if (!comma) return n;
        p = comma + 1;
    }
}
#define FOR_ITEMS(opt, list, item) \
    for (char *items_[64], **item_p = items_, **item_end = items_ + split_list(opt, list, items_), *item = NULL; \
         item_p < item_end && (item = *item_p, 1); item_p++)

static void parse_options(int argc, char **argv, to_options *o)
{
    memset(o, 0, sizeof *o);
    o->tasks[RG_TASK_COPY] = true;
    for (int i = 0; i < RG_POS_COUNT; i++) o->pos[i] = true;
    o->seeds = 1;
    o->steps = 3000;
    o->batch = 64;
    o->lr = 1e-3;
    o->train_len = 16;
    o->warmup = 100;
    o->min_lr_frac = 0.1;
    o->weight_decay = 0.01;
    o->clip = 1.0;
    o->beta1 = 0.9;
    o->beta2 = 0.98;
    o->eps = 1e-8;
    int lens[] = {8, 16, 24, 32, 48, 64};
    memcpy(o->test_lens, lens, sizeof lens);
    o->n_test_lens = 6;
    rg_rope_ext exts[] = {RG_ROPE_EXT_PI, RG_ROPE_EXT_NTK, RG_ROPE_EXT_YARN, RG_ROPE_EXT_LLAMA3};
    memcpy(o->exts, exts, sizeof exts);
    o->n_exts = 4;
    o->threads = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = ncpu > 0 ? (int)ncpu : 1;
    o->ckpt_every = 1000;
    o->micro_batches = 8;
    snprintf(o->out, sizeof o->out, "out");
    snprintf(o->data, sizeof o->data, "%s", RG_EVAL_PATH);
    o->model = rg_model_config_default();
    o->max_position = o->model.max_len;

    enum { O_TASK = 1, O_POS, O_SEEDS, O_STEPS, O_BATCH, O_LR, O_TRAIN_LEN, O_TEST_LENS, O_ROPE_EXT, O_RANDOM,
           O_THREADS, O_JOBS, O_OUT, O_RESUME, O_EVAL, O_QUIET, O_DATA, O_HELP, O_MICRO };
    static const struct option longopts[] = {
        {"task", required_argument, 0, O_TASK}, {"pos", required_argument, 0, O_POS},
        {"seeds", required_argument, 0, O_SEEDS}, {"steps", required_argument, 0, O_STEPS},
        {"batch", required_argument, 0, O_BATCH}, {"lr", required_argument, 0, O_LR},
        {"train-len", required_argument, 0, O_TRAIN_LEN}, {"test-lens", required_argument, 0, O_TEST_LENS},
        {"rope-ext", required_argument, 0, O_ROPE_EXT}, {"random-positions", no_argument, 0, O_RANDOM},
        {"threads", required_argument, 0, O_THREADS}, {"jobs", required_argument, 0, O_JOBS},
        {"out", required_argument, 0, O_OUT}, {"resume", required_argument, 0, O_RESUME},
        {"eval", required_argument, 0, O_EVAL}, {"quiet", no_argument, 0, O_QUIET},
        {"data", required_argument, 0, O_DATA}, {"help", no_argument, 0, O_HELP}, {"micro-batches", required_argument, 0, O_MICRO}, {0, 0, 0, 0}};
    int ch;
    bool steps_given = false;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        char buf[1024];
        switch (ch) {
        case O_TASK:
            memset(o->tasks, 0, sizeof o->tasks);
            snprintf(buf, sizeof buf, "%s", optarg);
            if (strcmp(buf, "all") == 0) { for (int i = 0; i < RG_TASK_COUNT; i++) o->tasks[i] = true; break; }
            FOR_ITEMS("--task", buf, it) {
                rg_task t;
                if (rg_task_parse(it, &t)) bad("--task: unknown task '%s'", it, "copy, reverse, sort, all");
                o->tasks[t] = true;
            }
            break;
        case O_POS:
            memset(o->pos, 0, sizeof o->pos);
            snprintf(buf, sizeof buf, "%s", optarg);
            if (strcmp(buf, "all") == 0) { for (int i = 0; i < RG_POS_COUNT; i++) o->pos[i] = true; break; }
            FOR_ITEMS("--pos", buf, it) {
                rg_pos_kind k;
                if (rg_pos_parse(it, &k))
                    bad("--pos: unknown encoding '%s'", it, "none, sinusoidal, learned, t5, xl, alibi, rope, rope-half, all");
                o->pos[k] = true;
            }
            break;
        case O_SEEDS: o->seeds = parse_int("--seeds", optarg, 1, 1000); break;
        case O_STEPS: o->steps = parse_int("--steps", optarg, 1, 100000000); steps_given = true; break;
        case O_BATCH: o->batch = parse_int("--batch", optarg, 1, 65536); break;
        case O_LR: o->lr = parse_double("--lr", optarg, 0, 10); break;
        case O_TRAIN_LEN: o->train_len = parse_int("--train-len", optarg, 1, 1000); break;
        case O_TEST_LENS:
            o->n_test_lens = 0;
            snprintf(buf, sizeof buf, "%s", optarg);
            FOR_ITEMS("--test-lens", buf, it) {
                if (o->n_test_lens == TO_MAX_LENS) bad("--test-lens: more than 16 lengths in '%s'", optarg, "up to 16");
                int n = parse_int("--test-lens", it, 1, RG_TASK_MAX_N);
                for (int j = 0; j < o->n_test_lens; j++)
                    if (o->test_lens[j] == n) bad("--test-lens: %s is listed twice", it, "each length once");
                o->test_lens[o->n_test_lens++] = n;
            }
            if (!o->n_test_lens) bad("--test-lens: empty list '%s'", optarg, "a comma list of lengths");
            break;
        case O_ROPE_EXT:
            o->n_exts = 0;
            snprintf(buf, sizeof buf, "%s", optarg);
            if (strcmp(buf, "none") == 0) break;
            if (strcmp(buf, "all") == 0) { o->n_exts = 4; memcpy(o->exts, exts, sizeof exts); break; }
            FOR_ITEMS("--rope-ext", buf, it) {
                rg_rope_ext e;
                if (rg_rope_ext_parse(it, &e) || e == RG_ROPE_EXT_NONE)
                    bad("--rope-ext: unknown extension '%s'", it, "pi, ntk, yarn, llama3, all, none");
                for (int j = 0; j < o->n_exts; j++)
                    if (o->exts[j] == e) bad("--rope-ext: %s is listed twice", it, "each extension once");
                o->exts[o->n_exts++] = e; /* at most 4 distinct ones exist */
            }
            break;
        case O_RANDOM: o->random_positions = true; break;
        case O_MICRO: o->micro_batches = parse_int("--micro-batches", optarg, 1, TO_MAX_MICRO); break;
        case O_THREADS: o->threads = parse_int("--threads", optarg, 1, 256); break;
        case O_JOBS: o->jobs = parse_int("--jobs", optarg, 1, 256); break;
        case O_OUT: snprintf(o->out, sizeof o->out, "%s", optarg); break;
        case O_RESUME: snprintf(o->resume, sizeof o->resume, "%s", optarg); break;
        case O_EVAL: snprintf(o->eval, sizeof o->eval, "%s", optarg); break;
        case O_QUIET: o->quiet = true; break;
        case O_DATA: snprintf(o->data, sizeof o->data, "%s", optarg); break;
        case O_HELP: usage(stdout); exit(0);
        default:
            bad("unknown option or missing value: '%s'", argv[optind - 1], "see --help");
        }
    }
    if (optind < argc) bad("unexpected argument '%s'", argv[optind], "options only (see --help)");
    if (o->resume[0] && o->eval[0]) bad("--resume and --eval together ('%s')", o->eval, "one of them");
    bool any = false;
    for (int i = 0; i < RG_TASK_COUNT; i++) any |= o->tasks[i];
    if (!any) bad("--task: no task selected%s", "", "copy, reverse, sort, all");
    any = false;
    for (int i = 0; i < RG_POS_COUNT; i++) any |= o->pos[i];
    if (!any) bad("--pos: no encoding selected%s", "", "none, sinusoidal, learned, t5, xl, alibi, rope, rope-half, all");
    if (o->warmup > o->steps) o->warmup = o->steps;
    if (o->ckpt_every > o->steps) o->ckpt_every = o->steps;
    const char *ck = o->resume[0] ? o->resume : o->eval[0] ? o->eval : NULL;
    if (ck && access(ck, R_OK) != 0) bad("checkpoint '%s' cannot be read", ck, "an existing checkpoint file");
    if (access(o->data, R_OK) != 0) bad("--data: '%s' cannot be read", o->data, "data/eval_sets.h5 (make data)");
    /* what can only fail later, after hours of training, is checked now */
    bool tasks[RG_TASK_COUNT];
    memcpy(tasks, o->tasks, sizeof tasks);
    if (ck) {
        rg_model_config cfg;
        rg_run_state rs;
        rg_task t;
        if (rg_checkpoint_read_config(ck, &cfg, &rs) || rg_task_parse(rs.task, &t)) {
            fprintf(stderr, "train_order: %s: %s\n  allowed: a checkpoint written by train_order\n", o->resume[0] ?
                    "--resume" : "--eval", rg_last_error());
            exit(2);
        }
        memset(tasks, 0, sizeof tasks);
        tasks[t] = true;
        if (to_options_from_checkpoint(o, ck, steps_given)) exit(2);
    } else {
        int T = 2 * o->train_len + 3;
        if (o->pos[RG_POS_LEARNED] && T > o->model.max_len) {
            char v[32];
            snprintf(v, sizeof v, "%d", o->train_len);
            bad("--train-len %s: sequences of 2n+3 tokens pass the learned position table (--pos learned)", v,
                "n <= 78 with learned positions (max_len 160)");
        }
        if (o->random_positions && T > o->max_position) {
            char v[32];
            snprintf(v, sizeof v, "%d", o->train_len);
            bad("--train-len %s: sequences of 2n+3 tokens need more random positions than [0, 160) has", v,
                "n <= 78 with --random-positions");
        }
    }
    for (int t = 0; t < RG_TASK_COUNT; t++)
        for (int i = 0; tasks[t] && i < o->n_test_lens; i++) {
            rg_evalset es;
            if (rg_evalset_load(o->data, rg_task_name((rg_task)t), o->test_lens[i], &es)) {
                fprintf(stderr, "train_order: --test-lens / --data: %s\n  allowed: lengths the data file has for "
                                "the task\n", rg_last_error());
                exit(2);
            }
            rg_evalset_free(&es);
        }
}

/* mkdir -p */
static int make_dir(const char *path)
{
    char buf[TO_PATH + 64];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) break;
        *p = '/';
    }
    if (mkdir(buf, 0755) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "train_order: cannot create %s: %s\n", path, strerror(errno));
    return -1;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct { rg_task task; rg_pos_kind pos; int seed; } job;

/* Reads the results of the finished runs (out/runs/<i>.txt) into all; removes the files if asked. */
static int gather(const to_options *o, int n_jobs, to_result *all, bool remove_files)
{
    int n_all = 0;
    for (int i = 0; i < n_jobs; i++) {
        char path[TO_PATH + 64];
        snprintf(path, sizeof path, "%s/runs/%d.txt", o->out, i);
        int n = to_result_load(path, all + n_all, 1 + TO_MAX_EXTS);
        if (n > 0) n_all += n;
        if (remove_files) remove(path);
    }
    return n_all;
}

int main(int argc, char **argv)
{
    rg_blas_prefer_fast_kernels(argv); /* OpenBLAS 0.3.21 runs SSE3 kernels on CPUs it does not know */
    to_options o;
    parse_options(argc, argv, &o);
    char cmd[2048] = "";
    for (int i = 0; i < argc; i++) {
        strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
        strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
    }
    char dir[TO_PATH + 32];
    snprintf(dir, sizeof dir, "%s/ckpt", o.out);
    if (make_dir(o.out) || make_dir(dir)) return 1;
    snprintf(dir, sizeof dir, "%s/runs", o.out);
    if (make_dir(dir)) return 1;
    rg_set_num_threads(o.threads);
    double t0 = now_seconds();

    /* the jobs: one checkpoint, or the grid */
    job *jobs = calloc((size_t)RG_TASK_COUNT * RG_POS_COUNT * (size_t)o.seeds, sizeof *jobs);
    int n_jobs = 0;
    const char *ck = o.resume[0] ? o.resume : o.eval[0] ? o.eval : NULL;
    if (ck) {
        jobs[n_jobs++] = (job){RG_TASK_COPY, RG_POS_NONE, 0}; /* read from the checkpoint */
    } else {
        for (int t = 0; t < RG_TASK_COUNT; t++)
            for (int p = 0; p < RG_POS_COUNT; p++)
                for (int s = 1; s <= o.seeds; s++)
                    if (o.tasks[t] && o.pos[p]) jobs[n_jobs++] = (job){(rg_task)t, (rg_pos_kind)p, s};
    }
    if (o.jobs > n_jobs) o.jobs = n_jobs;

    /* run them, at most o.jobs processes at a time; each writes its results to out/runs/<i>.txt */
    int failed = 0, running = 0, next = 0;
    pid_t *pids = calloc((size_t)n_jobs, sizeof *pids);
    fflush(NULL);
    while (next < n_jobs || running > 0) {
        if (next < n_jobs && running < o.jobs) {
            int i = next++;
            pid_t pid = o.jobs == 1 ? 0 : fork();
            if (pid < 0) { perror("train_order: fork"); failed++; continue; }
            if (pid == 0) {
                to_result res[1 + TO_MAX_EXTS];
                int n = to_run(&o, jobs[i].task, jobs[i].pos, jobs[i].seed, ck, o.eval[0] != 0, res);
                char path[TO_PATH + 64];
                snprintf(path, sizeof path, "%s/runs/%d.txt", o.out, i);
                int rc = n < 0 || to_result_save(path, res, n) ? 1 : 0;
                if (o.jobs == 1) { failed += rc; continue; }
                fflush(NULL);
                _exit(rc);
            }
            pids[i] = pid;
            running++;
            continue;
        }
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) break;
        running--;
        /* a report of the runs finished so far, so that a long grid stopped early still leaves one */
        if (next < n_jobs || running > 0) {
            to_result *part = calloc((size_t)n_jobs * (1 + TO_MAX_EXTS), sizeof *part);
            int n_part = part ? gather(&o, n_jobs, part, false) : 0;
            if (n_part) to_write_report(&o, part, n_part, now_seconds() - t0, cmd);
            free(part);
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            for (int i = 0; i < n_jobs; i++)
                if (pids[i] == pid)
                    fprintf(stderr, "train_order: run %s/%s/seed%d failed\n", rg_task_name(jobs[i].task),
                            rg_pos_name(jobs[i].pos), jobs[i].seed);
            failed++;
        }
    }

    /* gather */
    to_result *all = calloc((size_t)n_jobs * (1 + TO_MAX_EXTS), sizeof *all);
    int n_all = gather(&o, n_jobs, all, true);
    snprintf(dir, sizeof dir, "%s/runs", o.out);
    rmdir(dir);
    double wall = now_seconds() - t0;
    int rc = failed ? 1 : 0;
    if (n_all && to_write_report(&o, all, n_all, wall, cmd)) rc = 1;
    if (!o.quiet) fprintf(stderr, "train_order: %d run(s), %d failed, %.1f s; report in %s/report.md\n", n_jobs, failed,
                          wall, o.out);
    free(all);
    free(pids);
    free(jobs);
    return rc;
}
