#include "resources.h"
#include "jsonarena.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void resources_init(struct resources *r)
{
    r->items = NULL;
    r->len = 0;
    r->cap = 0;
}

void resources_finish(struct resources *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->len; i++)
        free(r->items[i].name);
    free(r->items);
    resources_init(r);
}

enum quantity_unit resources_unit(const char *name)
{
    return strcmp(name, "cpu") == 0 ? QUANTITY_UNIT_MILLI : QUANTITY_UNIT_BASE;
}

/* Index of name, or of where it would be inserted (*found = 0). */
static size_t find(const struct resources *r, const char *name, int *found)
{
    size_t lo = 0, hi = r->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->items[mid].name, name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

const struct quantity *resources_get(const struct resources *r, const char *name)
{
    int found;
    size_t i = find(r, name, &found);
    return found ? &r->items[i].quantity : NULL;
}

/* Returns the slot for name, inserting a zero DecimalSI quantity if absent. */
static struct quantity *slot(struct resources *r, const char *name)
{
    int found;
    size_t i = find(r, name, &found);
    if (found)
        return &r->items[i].quantity;
    if (r->len == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->items = util_realloc(r->items, r->cap * sizeof(*r->items));
    }
    memmove(&r->items[i + 1], &r->items[i], (r->len - i) * sizeof(*r->items));
    r->items[i].name = util_strdup(name);
    r->items[i].quantity.value = 0;
    r->items[i].quantity.format = QUANTITY_DECIMAL_SI;
    r->len++;
    return &r->items[i].quantity;
}

void resources_set(struct resources *r, const char *name, const struct quantity *q)
{
    *slot(r, name) = *q;
}

void resources_copy(struct resources *dst, const struct resources *src)
{
    if (dst == src)
        return;
    resources_finish(dst);
    for (size_t i = 0; i < src->len; i++)
        resources_set(dst, src->items[i].name, &src->items[i].quantity);
}

int resources_add_scaled(struct resources *dst, const struct resources *src, int64_t factor, struct error *err)
{
    for (size_t i = 0; i < src->len; i++) {
        struct quantity q = src->items[i].quantity;
        if (quantity_mul(&q, factor) != 0 || quantity_add(slot(dst, src->items[i].name), &q) != 0) {
            error_setf(err, "%s: total overflows a 64-bit integer", src->items[i].name);
            return -1;
        }
    }
    return 0;
}

void resources_max(struct resources *dst, const struct resources *src)
{
    for (size_t i = 0; i < src->len; i++) {
        const struct quantity *q = &src->items[i].quantity;
        const struct quantity *have = resources_get(dst, src->items[i].name);
        if (have == NULL || q->value > have->value)
            resources_set(dst, src->items[i].name, q);
    }
}

int resources_parse(struct resources *out, const json_t *obj, const char *path, unsigned flags, struct error *err)
{
    resources_finish(out);
    if (obj == NULL || json_is_null(obj))
        return 0;
    if (!json_is_object(obj)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    const char *name;
    json_t *value;
    /* jansson's object API takes non-const; iteration does not modify. */
    json_object_foreach((json_t *)obj, name, value)
    {
        char buf[32];
        const char *text;
        if (json_is_string(value)) {
            text = json_string_value(value);
        } else if (json_is_integer(value)) {
            snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(value));
            text = buf;
        } else {
            error_setf(err, "%s.%s: must be a quantity string or an integer", path, name);
            goto fail;
        }
        /* Quantity.UnmarshalJSON trims surrounding spaces before parsing. */
        size_t len = strlen(text);
        while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\n' || text[len - 1] == '\r'))
            len--;
        while (len > 0 && (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')) {
            text++;
            len--;
        }
        char *trimmed = util_realloc(NULL, len + 1);
        memcpy(trimmed, text, len);
        trimmed[len] = '\0';
        struct quantity q;
        struct error qerr;
        int rc = quantity_parse(trimmed, resources_unit(name), &q, &qerr);
        free(trimmed);
        if (rc != 0) {
            error_setf(err, "%s.%s: %s", path, name, qerr.message);
            goto fail;
        }
        if ((flags & RESOURCES_NONNEGATIVE) && q.value < 0) {
            error_setf(err, "%s.%s: must not be negative", path, name);
            goto fail;
        }
        resources_set(out, name, &q);
    }
    return 0;

fail:
    resources_finish(out);
    return -1;
}

json_t *resources_to_json(const struct resources *r)
{
    json_t *obj = json_object();
    /* Items are sorted, and jansson keeps insertion order: keys come out sorted. */
    for (size_t i = 0; i < r->len; i++) {
        char buf[QUANTITY_FORMAT_MAX];
        quantity_format(&r->items[i].quantity, resources_unit(r->items[i].name), buf, sizeof(buf));
        json_object_set_new(obj, r->items[i].name, json_string(buf));
    }
    return obj;
}

char *resources_to_string(const struct resources *r)
{
    json_t *obj = resources_to_json(r);
    char *s = jsonarena_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS, NULL);
    json_decref(obj);
    if (s == NULL)
        abort();
    return s;
}

void resources_put_quantity(struct util_buf *b, const char *resource, int64_t value, uint8_t format)
{
    char buf[QUANTITY_FORMAT_MAX];
    struct quantity q = {value < 0 ? 0 : value, (enum quantity_format)format};
    quantity_format(&q, resources_unit(resource), buf, sizeof(buf));
    util_buf_printf(b, "%s", buf);
}
