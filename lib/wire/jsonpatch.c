#include "jsonpatch.h"
#include "util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 2, 3))) static json_t *fail(struct error *err, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(err->message, sizeof(err->message), format, ap);
    va_end(ap);
    return NULL;
}

char *jsonpatch_pointer_join(const char *base, const char *token)
{
    size_t blen = strlen(base), n = blen + 2;
    for (const char *c = token; *c != '\0'; c++)
        n += (*c == '~' || *c == '/') ? 2 : 1;
    char *s = util_malloc(n), *o = s + blen;
    memcpy(s, base, blen);
    *o++ = '/';
    for (const char *c = token; *c != '\0'; c++) {
        if (*c == '~') {
            *o++ = '~';
            *o++ = '0';
        } else if (*c == '/') {
            *o++ = '~';
            *o++ = '1';
        } else {
            *o++ = *c;
        }
    }
    *o = '\0';
    return s;
}

char *jsonpatch_pointer_index(const char *base, size_t index)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%zu", index);
    return jsonpatch_pointer_join(base, buf);
}

void jsonpatch_append_new(json_t *patch, const char *op, const char *path, json_t *value)
{
    json_t *o = json_object();
    json_object_set_new(o, "op", json_string(op));
    json_object_set_new(o, "path", json_string(path));
    if (value != NULL)
        json_object_set_new(o, "value", value);
    json_array_append_new(patch, o);
}

/*
 * Splits a pointer into unescaped tokens (a NULL-terminated array of malloc'd
 * strings in one allocation). Returns NULL when the pointer is malformed.
 */
static char **split(const char *pointer, size_t *count)
{
    size_t n = 0, len = strlen(pointer);
    if (len > 0 && pointer[0] != '/')
        return NULL;
    for (const char *c = pointer; *c != '\0'; c++)
        n += *c == '/';
    /* The token pointers, then the characters of all tokens. */
    char **tokens = util_malloc((n + 1) * sizeof(char *) + len + 1);
    char *o = (char *)(tokens + n + 1);
    size_t t = 0;
    for (const char *c = pointer; *c != '\0';) {
        c++; /* the '/' */
        tokens[t++] = o;
        for (; *c != '\0' && *c != '/'; c++) {
            if (*c != '~') {
                *o++ = *c;
            } else if (c[1] == '0' || c[1] == '1') {
                *o++ = c[1] == '0' ? '~' : '/';
                c++;
            } else {
                free(tokens);
                return NULL;
            }
        }
        *o++ = '\0';
    }
    tokens[t] = NULL;
    *count = n;
    return tokens;
}

/* An array index token: "0" or digits without a leading zero. */
static int parse_index(const char *token, size_t *index)
{
    size_t v = 0;
    if (token[0] == '\0' || (token[0] == '0' && token[1] != '\0'))
        return -1;
    for (const char *c = token; *c != '\0'; c++) {
        if (*c < '0' || *c > '9' || v > (SIZE_MAX - 9) / 10)
            return -1;
        v = v * 10 + (size_t)(*c - '0');
    }
    *index = v;
    return 0;
}

static json_t *walk(json_t *doc, char **tokens, size_t count)
{
    json_t *cur = doc;
    for (size_t i = 0; i < count && cur != NULL; i++) {
        if (json_is_object(cur)) {
            cur = json_object_get(cur, tokens[i]);
        } else if (json_is_array(cur)) {
            size_t idx;
            if (parse_index(tokens[i], &idx) != 0)
                return NULL;
            cur = json_array_get(cur, idx);
        } else {
            return NULL;
        }
    }
    return cur;
}

json_t *jsonpatch_get(const json_t *doc, const char *pointer)
{
    size_t count;
    char **tokens = split(pointer, &count);
    if (tokens == NULL)
        return NULL;
    /* Borrowed references into doc: the caller decides whether it may modify. */
    json_t *v = walk((json_t *)doc, tokens, count);
    free(tokens);
    return v;
}

/* The operations on one location; value is stolen by add. Returns 0 or -1 with err. */
static int op_add(json_t **root, char **tokens, size_t count, json_t *value, size_t i, struct error *err)
{
    if (count == 0) {
        json_decref(*root);
        *root = value;
        return 0;
    }
    json_t *parent = walk(*root, tokens, count - 1);
    const char *last = tokens[count - 1];
    if (json_is_object(parent)) {
        json_object_set_new(parent, last, value);
        return 0;
    }
    if (json_is_array(parent)) {
        size_t idx;
        if (strcmp(last, "-") == 0) {
            json_array_append_new(parent, value);
            return 0;
        }
        if (parse_index(last, &idx) == 0 && idx <= json_array_size(parent)) {
            json_array_insert_new(parent, idx, value);
            return 0;
        }
        json_decref(value);
        fail(err, "operation %zu: array index \"%s\" out of range", i, last);
        return -1;
    }
    json_decref(value);
    fail(err, "operation %zu: parent of the path does not exist", i);
    return -1;
}

static int op_remove(json_t *root, char **tokens, size_t count, size_t i, struct error *err)
{
    json_t *parent = count > 0 ? walk(root, tokens, count - 1) : NULL;
    const char *last = count > 0 ? tokens[count - 1] : "";
    size_t idx;
    if (json_is_object(parent) && json_object_get(parent, last) != NULL) {
        json_object_del(parent, last);
        return 0;
    }
    if (json_is_array(parent) && parse_index(last, &idx) == 0 && idx < json_array_size(parent)) {
        json_array_remove(parent, idx);
        return 0;
    }
    fail(err, "operation %zu: path does not exist", i);
    return -1;
}

json_t *jsonpatch_apply(const json_t *doc, const json_t *patch, struct error *err)
{
    json_t *root = json_deep_copy(doc);
    size_t i;
    const json_t *op;
    char **tokens = NULL, **from_tokens = NULL;

    if (!json_is_array(patch)) {
        fail(err, "patch is not an array");
        goto fail;
    }
    json_array_foreach(patch, i, op)
    {
        const char *name = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        const char *from = json_string_value(json_object_get(op, "from"));
        json_t *value = json_object_get(op, "value");
        size_t count, from_count;
        if (!json_is_object(op) || name == NULL || path == NULL) {
            fail(err, "operation %zu: needs string members \"op\" and \"path\"", i);
            goto fail;
        }
        tokens = split(path, &count);
        if (tokens == NULL) {
            fail(err, "operation %zu: malformed path \"%s\"", i, path);
            goto fail;
        }
        if (strcmp(name, "add") == 0 || strcmp(name, "replace") == 0 || strcmp(name, "test") == 0) {
            if (value == NULL) {
                fail(err, "operation %zu: %s needs a \"value\"", i, name);
                goto fail;
            }
        }
        if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
            from_tokens = from != NULL ? split(from, &from_count) : NULL;
            if (from_tokens == NULL) {
                fail(err, "operation %zu: %s needs a valid \"from\"", i, name);
                goto fail;
            }
        }

        if (strcmp(name, "add") == 0) {
            if (op_add(&root, tokens, count, json_deep_copy(value), i, err) != 0)
                goto fail;
        } else if (strcmp(name, "remove") == 0) {
            if (op_remove(root, tokens, count, i, err) != 0)
                goto fail;
        } else if (strcmp(name, "replace") == 0) {
            if (walk(root, tokens, count) == NULL) {
                fail(err, "operation %zu: path \"%s\" does not exist", i, path);
                goto fail;
            }
            if (count > 0 && op_remove(root, tokens, count, i, err) != 0)
                goto fail;
            if (op_add(&root, tokens, count, json_deep_copy(value), i, err) != 0)
                goto fail;
        } else if (strcmp(name, "test") == 0) {
            json_t *target = walk(root, tokens, count);
            if (target == NULL || !json_equal(target, value)) {
                fail(err, "operation %zu: test of \"%s\" failed", i, path);
                goto fail;
            }
        } else if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
            json_t *source = walk(root, from_tokens, from_count);
            if (source == NULL) {
                fail(err, "operation %zu: from \"%s\" does not exist", i, from);
                goto fail;
            }
            int move = strcmp(name, "move") == 0;
            size_t flen = strlen(from);
            if (move && strncmp(path, from, flen) == 0 && path[flen] == '/') {
                fail(err, "operation %zu: cannot move \"%s\" into itself", i, from);
                goto fail;
            }
            json_t *moved = move ? json_incref(source) : json_deep_copy(source);
            if (move && from_count > 0 && op_remove(root, from_tokens, from_count, i, err) != 0) {
                json_decref(moved);
                goto fail;
            }
            if (op_add(&root, tokens, count, moved, i, err) != 0)
                goto fail;
        } else {
            fail(err, "operation %zu: unknown op \"%s\"", i, name);
            goto fail;
        }
        free(tokens);
        free(from_tokens);
        tokens = from_tokens = NULL;
    }
    return root;

fail:
    free(from_tokens);
    free(tokens);
    json_decref(root);
    return NULL;
}

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Keys of obj, sorted; the strings are borrowed from obj. */
static const char **sorted_keys(const json_t *obj, size_t *count)
{
    size_t n = json_object_size(obj), i = 0;
    const char **keys = util_malloc(n * sizeof(*keys));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        keys[i++] = key;
    }
    qsort(keys, n, sizeof(*keys), compare_keys);
    *count = n;
    return keys;
}

static void diff(json_t *patch, const char *path, const json_t *from, const json_t *to)
{
    if (json_equal(from, to))
        return;
    if (json_is_object(from) && json_is_object(to)) {
        size_t n;
        const char **keys = sorted_keys(from, &n);
        for (size_t i = 0; i < n; i++) {
            if (json_object_get(to, keys[i]) == NULL) {
                char *p = jsonpatch_pointer_join(path, keys[i]);
                jsonpatch_append_new(patch, "remove", p, NULL);
                free(p);
            }
        }
        free(keys);
        keys = sorted_keys(to, &n);
        for (size_t i = 0; i < n; i++) {
            char *p = jsonpatch_pointer_join(path, keys[i]);
            const json_t *old = json_object_get(from, keys[i]);
            const json_t *new = json_object_get(to, keys[i]);
            if (old == NULL)
                jsonpatch_append_new(patch, "add", p, json_deep_copy(new));
            else
                diff(patch, p, old, new);
            free(p);
        }
        free(keys);
        return;
    }
    if (json_is_array(from) && json_is_array(to) && json_array_size(from) == json_array_size(to)) {
        for (size_t i = 0; i < json_array_size(from); i++) {
            char *p = jsonpatch_pointer_index(path, i);
            diff(patch, p, json_array_get(from, i), json_array_get(to, i));
            free(p);
        }
        return;
    }
    jsonpatch_append_new(patch, "replace", path, json_deep_copy(to));
}

json_t *jsonpatch_diff(const json_t *from, const json_t *to)
{
    json_t *patch = json_array();
    diff(patch, "", from, to);
    return patch;
}

static void merge_diff(json_t *out, const json_t *from, const json_t *to)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)from, key, v)
    {
        if (json_object_get(to, key) == NULL)
            json_object_set_new(out, key, json_null());
    }
    json_object_foreach((json_t *)to, key, v)
    {
        const json_t *old = json_object_get(from, key);
        if (old != NULL && json_equal(old, v))
            continue;
        if (json_is_object(old) && json_is_object(v)) {
            json_t *sub = json_object();
            merge_diff(sub, old, v);
            json_object_set_new(out, key, sub);
        } else {
            json_object_set_new(out, key, json_deep_copy(v));
        }
    }
}

json_t *jsonpatch_merge_diff(const json_t *from, const json_t *to)
{
    json_t *out = json_object();
    merge_diff(out, json_is_object(from) ? from : NULL, to);
    return out;
}

json_t *jsonpatch_merge_apply(const json_t *doc, const json_t *patch)
{
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    json_t *out = json_is_object(doc) ? json_deep_copy(doc) : json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)patch, key, v)
    {
        if (json_is_null(v))
            json_object_del(out, key);
        else
            json_object_set_new(out, key, jsonpatch_merge_apply(json_object_get(out, key), v));
    }
    return out;
}
