/* config.c: the settings as a JSON object: --config FILE (one object, each key once, a JSON type that fits the
 * option, no NUL byte), and the same text applied from a report's or an invocation's stored settings. Each value
 * goes through the option table as a command-line value would. */
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/settings/settings.h"
#include "engine/settings/option_table.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void json_to_text(const cJSON *v, char *b, size_t n, const char *origin)
{
    int len = 0;
    if (cJSON_IsBool(v)) len = snprintf(b, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v)) {
        char num[32];
        len = snprintf(b, n, "%s", eng_number_text(v->valuedouble, num, sizeof num));
    }
    else if (cJSON_IsString(v)) len = snprintf(b, n, "%s", v->valuestring);
    else if (cJSON_IsArray(v)) {
        b[0] = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsNumber(it) && !cJSON_IsString(it))
                eng_usage_error("numbers or strings", "%s: an array item is neither a number nor a string", origin);
            size_t used = strlen(b) + (b[0] ? 1 : 0);
            if (used >= n) len = (int)n; /* no room left: the value is too long (below) */
            else {
                if (b[0]) strcat(b, ",");
                json_to_text(it, b + used, n - used, origin);
                len = (int)strlen(b);
            }
        }
    } else {
        eng_usage_error("a number, true/false, a string, or an array", "%s: unsupported JSON value", origin);
    }
    if (len < 0 || (size_t)len >= n) /* never cut a value: a shorter one would be read silently */
        eng_usage_error("a value of at most 8191 characters", "%s: the value is too long", origin);
}

/* The byte offset of the first \u0000 escape inside a JSON string of text, or -1: cJSON would end the string
 * there and silently drop the rest ("copy\u0000sort" read as "copy"). */
static long nul_escape(const char *text)
{
    bool in_string = false;
    for (const char *p = text; *p; p++) {
        if (*p == '"') in_string = !in_string;
        else if (in_string && *p == '\\') {
            if (p[1] == 'u' && !strncmp(p + 2, "0000", 4)) return (long)(p - text);
            if (p[1]) p++; /* the escaped character (\" does not end the string, \\ is one backslash) */
        }
    }
    return -1;
}

/* Whether a JSON value has the type a row takes: numbers for numbers, true/false for flags, a string for a path;
 * a list takes a string, a number (seeds: 3) or an array. */
static bool json_type_fits(const setting *s, const cJSON *v)
{
    switch (s->kind) {
    case K_INT:
    case K_DOUBLE: return cJSON_IsNumber(v);
    case K_BOOL: return cJSON_IsBool(v);
    case K_PATH: return cJSON_IsString(v);
    case K_LIST: return cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsArray(v);
    default: return false;
    }
}

/* The settings object of text (a --config file's, or a report's Settings) into o; exits 2 on an invalid one, the
 * message starting with src ("--config FILE"). */
static void config_text(eng_options *o, const char *text, const char *src)
{
    const char *end = NULL; /* the whole file is the object: nothing but white space after it */
    cJSON *root = cJSON_ParseWithOpts(text, &end, true);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        eng_usage_error("a JSON object of settings", "%s: not a JSON object (syntax error near byte %ld)",
                       src, (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
    }
    const cJSON *item;
    bool seen[ENG_SETTINGS_MAX] = {false}; /* on the stack: a usage error exits from inside the loop */
    cJSON_ArrayForEach(item, root) {
        const setting *s = eng_setting_find_key(item->string);
        if (s && !strcmp(s->name, "seeds") && cJSON_IsArray(item) && cJSON_GetArraySize(item) == 1)
            s = eng_setting_find("seed"); /* [5] is the one seed 5, not the seeds 1..5 */
        char origin[ENG_PATH + 128], value[8192];
        snprintf(origin, sizeof origin, "%s: %s", src, item->string);
        if (!s || !s->name || s->kind == K_ACTION || s->mode == M_TOOL || !strcmp(s->name, "print-config") ||
            !strcmp(s->name, "config"))
            eng_usage_error("the keys --print-config writes", "%s: unknown setting", origin);
        if (seen[eng_setting_index(s)]) { /* JSON leaves duplicate names open; one of them would be dropped silently */
            cJSON_Delete(root);
            eng_usage_error("each key once", "%s: '%s' is given twice", src, s->name);
        }
        seen[eng_setting_index(s)] = true;
        if (!json_type_fits(s, item)) {
            char allowed[1024];
            eng_setting_allowed(s, allowed, sizeof allowed);
            cJSON_Delete(root);
            eng_usage_error(allowed, "%s: a JSON %s, but --%s takes %s", origin,
                           cJSON_IsString(item) ? "string" : cJSON_IsNumber(item) ? "number" : cJSON_IsBool(item) ?
                           "true/false" : cJSON_IsNull(item) ? "null" : "array or object", s->name,
                           s->kind == K_BOOL ? "true or false" : s->kind == K_PATH ? "a string" :
                           s->kind == K_LIST ? "a string, a number or an array" : "a number");
        }
        json_to_text(item, value, sizeof value, origin);
        eng_setting_apply(s, o, value, origin);
        eng_setting_mark_given(s);
    }
    cJSON_Delete(root);
    bool both = seen[eng_setting_index(eng_setting_find("seed"))] && seen[eng_setting_index(eng_setting_find("seeds"))];
    if (both) eng_usage_error("one of seed S and seeds N|LIST", "%s: seed and seeds together", src);
}

void eng_options_load_config(eng_options *o, const char *path)
{
    FILE *f = eng_fopen_read(path);
    if (!f) eng_usage_error("a readable JSON file", "--config: cannot read '%s': %s", path, strerror(errno));
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    int read_errno = ferror(f) ? errno : 0; /* a folder: EISDIR */
    bool too_long = !read_errno && !feof(f);
    fclose(f);
    if (read_errno)
        eng_usage_error("a readable JSON file", "--config: cannot read '%s': %s", path, strerror(read_errno));
    if (too_long) eng_usage_error("a JSON file under 1 MiB", "--config %s: file too long", path);
    text[n] = 0;
    if (n == 0) eng_usage_error("a JSON object of settings", "--config %s: empty file (or a pipe with no writer)", path);
    if (strlen(text) != n)
        eng_usage_error("a JSON object of settings", "--config %s: a NUL byte at byte %zu", path, strlen(text));
    long nul = nul_escape(text);
    if (nul >= 0) eng_usage_error("a JSON object of settings", "--config %s: a \\u0000 escape at byte %ld", path, nul);
    char src[ENG_PATH + 16];
    snprintf(src, sizeof src, "--config %s", path);
    config_text(o, text, src);
}

void eng_options_apply_config(eng_options *o, const char *text, const char *src)
{
    long nul = nul_escape(text);
    if (nul >= 0) eng_usage_error("a JSON object of settings", "%s: a \\u0000 escape at byte %ld", src, nul);
    config_text(o, text, src);
}
