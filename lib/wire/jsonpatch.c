#include "jsonpatch.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    json_object_set_new_nocheck(o, "op", json_string_nocheck(op));
    json_object_set_new_nocheck(o, "path", json_string_nocheck(path));
    if (value != NULL)
        json_object_set_new_nocheck(o, "value", value);
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
        error_setf(err, "operation %zu: array index \"%s\" out of range", i, last);
        return -1;
    }
    json_decref(value);
    error_setf(err, "operation %zu: parent of the path does not exist", i);
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
    error_setf(err, "operation %zu: path does not exist", i);
    return -1;
}

/* One operation of a patch: its members (borrowed from the patch) and its path and from as tokens. */
struct op {
    size_t i; /* its index, for messages */
    const char *name, *path, *from;
    json_t *value;
    char **tokens, **from_tokens; /* owned; from_tokens only for move and copy */
    size_t count, from_count;
};

/* Reads and checks operation i's members into o. Returns 0, or -1 with err. */
static int op_read(const json_t *member, size_t i, struct op *o, struct error *err)
{
    o->i = i;
    o->name = json_string_value(json_object_get(member, "op"));
    o->path = json_string_value(json_object_get(member, "path"));
    o->from = json_string_value(json_object_get(member, "from"));
    o->value = json_object_get(member, "value");
    if (!json_is_object(member) || o->name == NULL || o->path == NULL) {
        error_setf(err, "operation %zu: needs string members \"op\" and \"path\"", i);
        return -1;
    }
    o->tokens = split(o->path, &o->count);
    if (o->tokens == NULL) {
        error_setf(err, "operation %zu: malformed path \"%s\"", i, o->path);
        return -1;
    }
    if ((strcmp(o->name, "add") == 0 || strcmp(o->name, "replace") == 0 || strcmp(o->name, "test") == 0) && o->value == NULL) {
        error_setf(err, "operation %zu: %s needs a \"value\"", i, o->name);
        return -1;
    }
    if (strcmp(o->name, "move") == 0 || strcmp(o->name, "copy") == 0) {
        o->from_tokens = o->from != NULL ? split(o->from, &o->from_count) : NULL;
        if (o->from_tokens == NULL) {
            error_setf(err, "operation %zu: %s needs a valid \"from\"", i, o->name);
            return -1;
        }
    }
    return 0;
}

static int op_move_copy(json_t **root, const struct op *o, struct error *err)
{
    json_t *source = walk(*root, o->from_tokens, o->from_count);
    if (source == NULL) {
        error_setf(err, "operation %zu: from \"%s\" does not exist", o->i, o->from);
        return -1;
    }
    int move = strcmp(o->name, "move") == 0;
    size_t flen = strlen(o->from);
    if (move && strncmp(o->path, o->from, flen) == 0 && o->path[flen] == '/') {
        error_setf(err, "operation %zu: cannot move \"%s\" into itself", o->i, o->from);
        return -1;
    }
    json_t *moved = move ? json_incref(source) : json_deep_copy(source);
    if (move && o->from_count > 0 && op_remove(*root, o->from_tokens, o->from_count, o->i, err) != 0) {
        json_decref(moved);
        return -1;
    }
    return op_add(root, o->tokens, o->count, moved, o->i, err);
}

/* Applies the checked operation o to *root (which add and replace of "" replace). Returns 0, or -1 with err. */
static int op_apply(json_t **root, const struct op *o, struct error *err)
{
    if (strcmp(o->name, "add") == 0)
        return op_add(root, o->tokens, o->count, json_deep_copy(o->value), o->i, err);
    if (strcmp(o->name, "remove") == 0)
        return op_remove(*root, o->tokens, o->count, o->i, err);
    if (strcmp(o->name, "replace") == 0) {
        if (walk(*root, o->tokens, o->count) == NULL) {
            error_setf(err, "operation %zu: path \"%s\" does not exist", o->i, o->path);
            return -1;
        }
        if (o->count > 0 && op_remove(*root, o->tokens, o->count, o->i, err) != 0)
            return -1;
        return op_add(root, o->tokens, o->count, json_deep_copy(o->value), o->i, err);
    }
    if (strcmp(o->name, "test") == 0) {
        json_t *target = walk(*root, o->tokens, o->count);
        if (target == NULL || !json_equal(target, o->value)) {
            error_setf(err, "operation %zu: test of \"%s\" failed", o->i, o->path);
            return -1;
        }
        return 0;
    }
    if (strcmp(o->name, "move") == 0 || strcmp(o->name, "copy") == 0)
        return op_move_copy(root, o, err);
    error_setf(err, "operation %zu: unknown op \"%s\"", o->i, o->name);
    return -1;
}

json_t *jsonpatch_apply(const json_t *doc, const json_t *patch, struct error *err)
{
    json_t *root = json_deep_copy(doc);
    size_t i;
    const json_t *member;

    if (!json_is_array(patch)) {
        error_setf(err, "patch is not an array");
        json_decref(root);
        return NULL;
    }
    json_array_foreach(patch, i, member)
    {
        struct op o = {0};
        int rc = op_read(member, i, &o, err) == 0 ? op_apply(&root, &o, err) : -1;
        free(o.tokens);
        free(o.from_tokens);
        if (rc != 0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
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
            const json_t *old = json_object_get(from, keys[i]);
            const json_t *new = json_object_get(to, keys[i]);
            if (old == new)
                continue; /* one value, shared by a shallow copy (mutate's copy on write): nothing to say, no path to build */
            char *p = jsonpatch_pointer_join(path, keys[i]);
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

json_t *jsonpatch_merge_compose(const json_t *first, const json_t *second)
{
    if (!json_is_object(first) || !json_is_object(second))
        return json_deep_copy(second);
    json_t *out = json_deep_copy(first);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)second, k, v)
    {
        json_t *a = json_object_get(out, k);
        json_object_set_new(out, k, a != NULL ? jsonpatch_merge_compose(a, v) : json_deep_copy(v));
    }
    return out;
}

json_t *jsonpatch_own_object(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    v = json_is_object(v) ? json_copy(v) : json_object();
    json_object_set_new(obj, key, v);
    return v;
}
