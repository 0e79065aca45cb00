/*
 * fixtures: finding and loading the data files the unit tests are driven by.
 * Files live under $RAYGATE_FIXTURES (set by tests/unit/meson.build).
 */
#ifndef RAYGATE_TEST_FIXTURES_H
#define RAYGATE_TEST_FIXTURES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"

/* Returns a new (malloc'd) absolute path of rel under the fixture root; aborts without it. */
static inline char *fixture_path(const char *rel)
{
    const char *root = getenv("RAYGATE_FIXTURES");
    if (root == NULL) {
        fputs("RAYGATE_FIXTURES is not set\n", stderr);
        abort();
    }
    size_t n = strlen(root) + strlen(rel) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", root, rel);
    return p;
}

/* Reads a fixture file whole into a new NUL-terminated buffer and sets *len; aborts if it cannot. */
static inline char *fixture_read(const char *rel, size_t *len)
{
    char *p = fixture_path(rel);
    char *buf = util_read_file(p, (size_t)64 << 20, len);
    if (buf == NULL) {
        fprintf(stderr, "cannot read fixture %s\n", p);
        abort();
    }
    free(p);
    return buf;
}

/* Loads a JSON fixture (path relative to the root); returns a new reference, aborts on error. */
static inline json_t *fixture_json(const char *rel)
{
    char *p = fixture_path(rel);
    json_error_t err;
    json_t *j = json_load_file(p, JSON_REJECT_DUPLICATES, &err);
    if (j == NULL) {
        fprintf(stderr, "%s:%d: %s\n", p, err.line, err.text);
        abort();
    }
    free(p);
    return j;
}

static inline int fixture_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Lists the *.json files of a fixture folder, sorted, as new strings relative
 * to the root ("gang/head-only.json"); *count is set. Free each and the array.
 */
static inline char **fixture_list(const char *dir, size_t *count)
{
    char *p = fixture_path(dir);
    DIR *d = opendir(p);
    if (d == NULL) {
        fprintf(stderr, "cannot open %s\n", p);
        abort();
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        size_t m = strlen(dir) + len + 2;
        names[n] = malloc(m);
        snprintf(names[n], m, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    free(p);
    qsort(names, n, sizeof(*names), fixture_compare);
    *count = n;
    return names;
}

static inline void fixture_list_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* Compact, sorted JSON text of j for failure messages; caller frees. */
static inline char *fixture_dump(const json_t *j)
{
    return j == NULL ? strdup("(null)") : json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/*
 * Fails the running cmocka test unless got equals want, showing both.
 * where and what (may be NULL) say which case and which part.
 * (Include cmocka.h before this header.)
 */
static inline void fixture_check_json(const char *where, const char *what, const json_t *got, const json_t *want)
{
    if (got != NULL && json_equal(got, want))
        return;
    char *g = fixture_dump(got), *w = fixture_dump(want);
    fail_msg("%s%s%s: got %s, expected %s", where, what != NULL ? ": " : "", what != NULL ? what : "", g, w);
}

#endif
