/*
 * jsonscan: a strict, allocation-light JSON tokenizer for the webhook's hot
 * path. One pass over the text yields a flat array of tokens (objects,
 * arrays, strings, numbers, literals) that point into the text; nothing is
 * copied or decoded, so reading a few fields of a 6 KB AdmissionReview costs a
 * scan, not a tree of allocations.
 *
 * It accepts a subset of what jansson accepts and never more: a document it
 * accepts, jansson (json_loadb with JSON_REJECT_DUPLICATES) reads as the same
 * values. Whatever it is unsure of it declines (returns -1) and the caller
 * falls back to jansson, which then gives the error or the value: text that
 * is not JSON, a top level other than an object, duplicate keys, non-ASCII
 * bytes in strings (validating UTF-8 is jansson's job), \u0000 and lone
 * surrogates (jansson refuses them), escapes in keys (unless escaped_keys), numbers of more than 15
 * characters, nesting deeper than JSONSCAN_MAX_DEPTH. A \u escape in a value
 * (the API server writes <, > and & so) is decoded into UTF-8 as jansson does.
 */
#ifndef RAYGATE_JSONSCAN_H
#define RAYGATE_JSONSCAN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JSONSCAN_MAX_DEPTH 256

enum jsonscan_type {
    JSONSCAN_OBJECT = 1,
    JSONSCAN_ARRAY,
    JSONSCAN_STRING,
    JSONSCAN_NUMBER,
    JSONSCAN_TRUE,
    JSONSCAN_FALSE,
    JSONSCAN_NULL,
};

struct jsonscan_token {
    uint8_t type;    /* enum jsonscan_type */
    uint8_t escaped; /* a string with backslash escapes: its raw text is not its value */
    uint32_t start;  /* offset of the first byte (for a string: after the quote) */
    uint32_t len;    /* bytes (for a string: between the quotes) */
    uint32_t count;  /* object: members; array: elements */
    uint32_t next;   /* index of the token after this value and everything in it */
};

/*
 * A scanned document: tokens in document order; an object's members are
 * key, value, key, value... A scan owns its tokens (jsonscan_finish).
 */
struct jsonscan {
    const char *text;
    struct jsonscan_token *tokens;
    size_t len, cap;
    /*
     * 0 (jsonscan_init): a key with escapes is declined, as jsonscan_get()
     * compares raw keys and would miss it. 1: accepted, its name decoded by
     * jsonscan_value() and in the duplicate check; jsonscan_get() and a
     * shape's key comparisons never match it (a watch stream's shape: such a
     * member is built whole).
     */
    int escaped_keys;
};

/* Initialises an empty scan in caller-owned storage. */
void jsonscan_init(struct jsonscan *s);

/* Frees the tokens; s may be NULL. */
void jsonscan_finish(struct jsonscan *s);

/*
 * Scans text[0..len) (borrowed: it must outlive s) into s, replacing what s
 * held. Returns 0 when the text is one JSON object (with only whitespace
 * around it) that jansson reads as scanned, else -1 (see above).
 */
int jsonscan_parse(struct jsonscan *s, const char *text, size_t len);

/*
 * The value of member key (NUL-terminated, compared byte for byte with the raw
 * key) of the object at token index obj, or -1 if obj is not an object or has
 * no such member (keys with escapes never match).
 */
long jsonscan_get(const struct jsonscan *s, long obj, const char *key);

/* Whether token i is a string without escapes equal to value (NUL-terminated). */
int jsonscan_string_is(const struct jsonscan *s, long i, const char *value);

/* The type of token i, or 0 when i is -1. */
int jsonscan_type(const struct jsonscan *s, long i);

/*
 * Which members of an object jsonscan_value() builds, and how: called with
 * the shape of the object (or array) at hand and the token index of a
 * member's key (-1 for an array's elements); returns the shape to build that
 * member's value with, or JSONSCAN_DROP to leave the member out. The shape
 * JSONSCAN_WHOLE builds everything and is never passed to the function.
 */
#define JSONSCAN_WHOLE 0
#define JSONSCAN_DROP (-1)
typedef int (*jsonscan_shape_fn)(int shape, const struct jsonscan *s, long key);

/*
 * The value at token index i (new), built as json_loadb() reads its text:
 * strings decoded, integers as json_integer, numbers with a fraction as
 * json_real, objects keeping their members' order. With shape other than
 * JSONSCAN_WHOLE, the members of objects and arrays are built as fn says,
 * so that a caller builds only the parts of a document it reads. NULL when
 * i is not a token.
 */
json_t *jsonscan_value(const struct jsonscan *s, long i, int shape, jsonscan_shape_fn fn);

#endif
