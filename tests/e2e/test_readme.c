/* test_readme.c: the README a newcomer starts from. README.md is at most 10,000 bytes; every relative
 * link in README.md and the .md files under docs/ and results/ resolves (the file exists; a #fragment into a .md
 * file names one of its headings, as GitHub makes anchors); and the README's compile line builds and runs both its own training script
 * (the first ```c block) and examples/train_tiny.c. And the repository's text gives reasons, not tracker numbers:
 * no "issue N" in src/, tests/, docs/, the Makefile or mk/, and no commit hash in a docs/ guide.
 *
 * The line is read from README.md (the first `cc -std=c11 ...` in backticks) and run as written by /bin/sh (it
 * holds $(pkg-config ...)), with RG set to this checkout, my_train.c replaced by examples/train_tiny.c and
 * $RG/build/ by the build folder of this test (RG_BUILD_DIR, as tests/run.sh sets it). The library went from
 * OpenBLAS alone to libxsmm + OpenBLAS, and the README's line stopped linking (undefined libxsmm_smmdispatch)
 * without any test noticing. Skipped under the sanitizers: their library needs the sanitizer's link flags. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "common.h"
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Replaces every `from` in s (capacity cap) by `to`; false if it does not fit. */
static bool replace_all(char *s, size_t cap, const char *from, const char *to)
{
    char out[4096] = "", *p = s, *hit;
    size_t n = 0;
    while ((hit = strstr(p, from))) {
        n += (size_t)snprintf(out + n, n < sizeof out ? sizeof out - n : 0, "%.*s%s", (int)(hit - p), p, to);
        p = hit + strlen(from);
    }
    n += (size_t)snprintf(out + n, n < sizeof out ? sizeof out - n : 0, "%s", p);
    if (n >= sizeof out || n >= cap) return false;
    memcpy(s, out, n + 1);
    return true;
}

static int run_argv(char *const argv[], const char *rg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("RG", rg, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char readme[1 << 17];

/* README.md's text into readme; its size in bytes. */
static size_t read_readme(void)
{
    FILE *f = fopen("README.md", "r");
    assert_non_null(f);
    size_t n = fread(readme, 1, sizeof readme - 1, f);
    fclose(f);
    readme[n] = 0;
    return n;
}

/* Builds `source` with the README's compile line (my_train.c replaced by source) and runs it: its exit status. */
static int build_and_run(const char *line_in, const char *source, const char *tmp)
{
    char line[4096], rg[PATH_MAX], build[PATH_MAX], lib_dir[PATH_MAX + 8], exe[PATH_MAX], cmd[4096 + PATH_MAX + 8];
    snprintf(line, sizeof line, "%.3000s", line_in);
    const char *bd = getenv("RG_BUILD_DIR");
    assert_non_null(getcwd(rg, sizeof rg));
    if (!realpath(bd && *bd ? bd : "build", build)) fail_msg("no build folder (make all)");
    snprintf(lib_dir, sizeof lib_dir, "%s/", build);
    snprintf(exe, sizeof exe, "%s/my_train", tmp);
    if (!replace_all(line, sizeof line, "$RG/build/", lib_dir) || !replace_all(line, sizeof line, "my_train.c", source))
        fail_msg("README compile line too long");
    snprintf(cmd, sizeof cmd, "%s -o %s", line, exe);
    print_message("README: %s\n", cmd);
    int rc = run_argv((char *[]){"/bin/sh", "-c", cmd, NULL}, rg);
    if (rc != 0) fail_msg("the README's compile line exited %d for %s", rc, source);
    rc = run_argv((char *[]){exe, NULL}, rg);
    unlink(exe);
    return rc;
}

static void test_readme_compile_line(void **state)
{
#if defined(__SANITIZE_ADDRESS__)
    skip();
#endif
    read_readme();
    char *start = strstr(readme, "`cc -std=c11");
    if (!start) fail_msg("README.md has no `cc -std=c11 ...` compile line");
    start++;
    char *end = strchr(start, '`');
    assert_non_null(end);
    char line[4096], tmp[] = "/tmp/rg_readme_XXXXXX", src[64];
    snprintf(line, sizeof line, "%.*s", (int)(end - start), start);
    assert_non_null(mkdtemp(tmp));
    /* the README's own script: the first ```c block */
    char *code = strstr(readme, "\n```c\n"), *code_end = code ? strstr(code + 6, "\n```\n") : NULL;
    if (!code || !code_end) fail_msg("README.md has no ```c block");
    snprintf(src, sizeof src, "%s/my_train.c", tmp);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    fprintf(f, "%.*s\n", (int)(code_end - code - 6), code + 6);
    fclose(f);
    int rc = build_and_run(line, src, tmp);
    unlink(src);
    if (rc != 0) fail_msg("the README's training script built with its line exited %d", rc);
    rc = build_and_run(line, "examples/train_tiny.c", tmp);
    rmdir(tmp);
    if (rc != 0) fail_msg("train_tiny built with the README's line exited %d", rc);
}

static void test_readme_size(void **state)
{
    size_t n = read_readme();
    print_message("README.md: %zu bytes\n", n);
    if (n > 10000) fail_msg("README.md is %zu bytes, more than 10,000: move the detail to docs/", n);
}

/* GitHub's anchor of a heading: lowercase, spaces to '-', only letters, digits, '-' and '_' (and bytes >= 0x80)
 * kept. */
static void slug(const char *h, size_t len, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)h[i];
        if (c == ' ') out[k++] = '-';
        else if (isalnum(c) || c == '-' || c == '_' || c >= 0x80) out[k++] = (char)tolower(c);
    }
    out[k] = 0;
}

/* Whether the markdown file at path has a heading whose anchor is frag. */
static bool has_anchor(const char *path, const char *frag)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[4096], a[4096];
    bool found = false, fence = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "```", 3) == 0) fence = !fence;
        if (fence || line[0] != '#') continue;
        const char *h = line + strspn(line, "#");
        h += strspn(h, " ");
        slug(h, strcspn(h, "\n"), a, sizeof a);
        found = strcmp(a, frag) == 0;
    }
    fclose(f);
    return found;
}

/* Checks every [text](target) of the markdown file path (outside code blocks and spans) whose target is relative;
 * returns the number of broken ones, each printed. */
static int check_links(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    char dir[PATH_MAX], line[8192];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    int broken = 0, lineno = 0;
    bool fence = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (strncmp(line, "```", 3) == 0) { fence = !fence; continue; }
        if (fence) continue;
        bool code = false;
        for (char *p = line; *p; p++) {
            if (*p == '`') { code = !code; continue; }
            if (code || p[0] != ']' || p[1] != '(') continue;
            char *t = p + 2, *e = strchr(t, ')');
            if (!e) continue;
            char target[PATH_MAX], file[2 * PATH_MAX + 2];
            snprintf(target, sizeof target, "%.*s", (int)(e - t), t);
            p = e;
            if (strstr(target, "://") || strncmp(target, "mailto:", 7) == 0) continue;
            char *hash = strchr(target, '#'), *frag = NULL;
            if (hash) { *hash = 0; frag = hash + 1; }
            if (target[0] == '/') { printf("%s:%d: absolute link %s\n", path, lineno, target); broken++; continue; }
            snprintf(file, sizeof file, "%s/%s", target[0] ? dir : "", target[0] ? target : path);
            if (!target[0]) snprintf(file, sizeof file, "%s", path);
            struct stat sb;
            if (stat(file, &sb) != 0) { printf("%s:%d: %s does not exist\n", path, lineno, file); broken++; continue; }
            size_t fl = strlen(file);
            if (frag && *frag && fl > 3 && strcmp(file + fl - 3, ".md") == 0 && !has_anchor(file, frag)) {
                printf("%s:%d: %s has no heading #%s\n", path, lineno, file, frag);
                broken++;
            }
        }
    }
    fclose(f);
    return broken;
}

/* check_links on every .md file under dir, its subfolders included (results/ holds one folder per experiment, with
 * figures/ and blocks/ below it); adds the files checked to *files, returns the broken links. */
static int check_tree(const char *dir, int *files)
{
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    int broken = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(sb.st_mode)) broken += check_tree(path, files);
        else if (n >= 4 && strcmp(e->d_name + n - 3, ".md") == 0) {
            broken += check_links(path);
            (*files)++;
        }
    }
    closedir(d);
    return broken;
}

/* Every relative link of README.md and of the .md files under docs/, results/ and bench/ resolves. */
static void test_links_resolve(void **state)
{
    int files = 1, broken = check_links("README.md");
    int before = files;
    broken += check_tree("docs", &files);
    if (files == before) fail_msg("no .md file found under docs/: run from the repository's root");
    before = files;
    broken += check_tree("results", &files);
    if (files == before) fail_msg("no .md file found under results/: run from the repository's root");
    broken += check_tree("bench", &files);
    print_message("links checked in %d files\n", files);
    if (broken) fail_msg("%d broken relative links (listed above)", broken);
}

/* ---- No "issue N" as a reason, no commit hash in a guide ----
 * A reader cannot open "issue N" (a tracker they may not have): a comment or a page gives the reason itself, or
 * links docs/decisions.md. And a guide (a .md file of docs/) states how things work now: a commit hash belongs to
 * a results folder's provenance (results/.../README.md), not to a guide. */

/* Whether s (at most n bytes) holds "issue N" or "issues N" (any case, '#' allowed before N) as a word. */
static bool has_issue_ref(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        if (strncasecmp(p, "issue", 5) != 0) continue;
        const char *q = p + 5;
        if (*q == 's' || *q == 'S') q++;
        if (*q != ' ') continue;
        q++;
        if (*q == '#') q++;
        if (isdigit((unsigned char)*q)) return true;
    }
    return false;
}

/* Lines of every file under path (a file or a folder, recursively) holding "issue N"; each printed. */
static int scan_issue_refs(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return 0;
    int found = 0;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (!d) fail_msg("cannot open %s", path);
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.' || strcmp(e->d_name, "fixtures") == 0) continue;
            char sub[PATH_MAX];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            found += scan_issue_refs(sub);
        }
        closedir(d);
        return found;
    }
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[8192];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (has_issue_ref(line)) { printf("%s:%d: \"issue N\" as a reason: %s", path, lineno, line); found++; }
    }
    fclose(f);
    return found;
}

static void test_no_issue_refs(void **state)
{
    const char *roots[] = {"src", "tests", "docs", "bench", "Makefile", "mk"};
    int found = 0;
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) found += scan_issue_refs(roots[i]);
    if (found) fail_msg("%d lines give \"issue N\" as their reason (listed above): state the reason itself", found);
    /* the check itself finds one */
    assert_true(has_issue_ref("see Issue #" "12 for why"));
    assert_false(has_issue_ref("tissue 5, issues, issue x"));
}

/* Whether the word w (n bytes) looks like a commit hash: 7 to 40 lowercase hex digits with at least one digit and
 * at least one letter (so neither a number like 1000000 nor a word like "defaced"). */
static bool hash_like(const char *w, size_t n)
{
    if (n < 7 || n > 40) return false;
    bool digit = false, letter = false;
    for (size_t i = 0; i < n; i++) {
        if (isdigit((unsigned char)w[i])) digit = true;
        else if (w[i] >= 'a' && w[i] <= 'f') letter = true;
        else return false;
    }
    return digit && letter;
}

/* The commit-hash-like words of the guide at path, each printed. Code is exempt: fenced blocks and `code spans`
 * hold examples (a CRC, a git_commit attribute as h5dump prints it, a sha256), not history. */
static int scan_hashes(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    char line[8192];
    int lineno = 0, found = 0;
    bool fence = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (strncmp(line + strspn(line, " "), "```", 3) == 0) { fence = !fence; continue; }
        if (fence) continue;
        bool code = false;
        for (const char *p = line; *p;) {
            if (*p == '`') { code = !code; p++; continue; }
            if (!isalnum((unsigned char)*p) && *p != '_') { p++; continue; }
            size_t n = 0;
            while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
            if (!code && hash_like(p, n)) {
                printf("%s:%d: commit hash %.*s in a guide\n", path, lineno, (int)n, p);
                found++;
            }
            p += n;
        }
    }
    fclose(f);
    return found;
}

static void test_no_commit_hashes_in_guides(void **state)
{
    DIR *d = opendir("docs");
    if (!d) fail_msg("cannot open docs/: run from the repository's root");
    int found = 0, files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md") != 0) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "docs/%s", e->d_name);
        found += scan_hashes(path);
        files++;
    }
    closedir(d);
    if (!files) fail_msg("no guide found under docs/");
    if (found)
        fail_msg("%d commit hashes in docs/ guides (listed above): move the history to docs/decisions.md and the "
                 "provenance to results/", found);
    assert_true(hash_like("13c04c4", 7));
    assert_false(hash_like("1000000", 7));
    assert_false(hash_like("defaced", 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_readme_size), cmocka_unit_test(test_links_resolve),
                                       cmocka_unit_test(test_readme_compile_line),
                                       cmocka_unit_test(test_no_issue_refs),
                                       cmocka_unit_test(test_no_commit_hashes_in_guides)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
