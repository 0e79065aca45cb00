#include "jsonscan.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "util.h"

void jsonscan_init(struct jsonscan *s)
{
    memset(s, 0, sizeof(*s));
}

void jsonscan_finish(struct jsonscan *s)
{
    if (s == NULL)
        return;
    free(s->tokens);
    jsonscan_init(s);
}

struct cursor {
    struct jsonscan *s;
    const unsigned char *p;
    size_t pos, end;
};

static void skip_ws(struct cursor *c)
{
    if (c->pos < c->end && c->p[c->pos] > ' ')
        return; /* compact JSON, the API server's: no whitespace at all */
    while (c->pos < c->end && (c->p[c->pos] == ' ' || c->p[c->pos] == '\n' || c->p[c->pos] == '\r' || c->p[c->pos] == '\t'))
        c->pos++;
}

static long push(struct cursor *c, enum jsonscan_type type, size_t start)
{
    struct jsonscan *s = c->s;
    if (s->len == s->cap) {
        /* A KubeRay object's JSON has about one token per 8 bytes: one allocation, mostly. */
        s->cap = s->cap ? s->cap * 2 : (c->end / 8 > 256 ? c->end / 8 : 256);
        s->tokens = util_realloc(s->tokens, s->cap * sizeof(*s->tokens));
    }
    struct jsonscan_token *t = &s->tokens[s->len];
    memset(t, 0, sizeof(*t));
    t->type = (uint8_t)type;
    t->start = (uint32_t)start;
    return (long)s->len++;
}

/* The 4 hex digits at p (at least 4 bytes), or -1. */
static long hex4(const unsigned char *p)
{
    long v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char h = p[k];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/*
 * The length of the \u escape at p[0..n) (p[0] the backslash): 6, or 12 for
 * a surrogate pair; 0 when jansson would refuse it (not 4 hex digits, a lone
 * surrogate, \u0000: jansson without JSON_ALLOW_NUL).
 */
static size_t u_escape_len(const unsigned char *p, size_t n)
{
    long hi = n >= 6 ? hex4(p + 2) : -1;
    if (hi <= 0 || (hi >= 0xdc00 && hi <= 0xdfff))
        return 0;
    if (hi < 0xd800 || hi > 0xdbff)
        return 6;
    long lo = n >= 12 && p[6] == '\\' && p[7] == 'u' ? hex4(p + 8) : -1;
    return lo >= 0xdc00 && lo <= 0xdfff ? 12 : 0;
}

#if defined(__SSE2__)
/*
 * The plain run from pos, 16 bytes at a time (SSE2, on every x86-64): the
 * position of the first byte that is a quote, a backslash, or, as a signed
 * byte, below 0x20 (control characters, and every byte from 0x80); or, when
 * none is in the whole 16 bytes that remain, one of the last 15 bytes.
 */
static size_t plain_run(const unsigned char *p, size_t pos, size_t end)
{
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    for (; end - pos >= 16; pos += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + pos));
        __m128i special =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), _mm_cmpgt_epi8(space, v));
        unsigned mask = (unsigned)_mm_movemask_epi8(special);
        if (mask != 0)
            return pos + (size_t)__builtin_ctz(mask);
    }
    return pos;
}
#else
/*
 * Whether any of the 8 bytes of w is not a plain string byte: below 0x20, at or
 * above 0x80, a quote or a backslash. (v - 0x01..) & ~v has a byte's high bit
 * set when that byte is zero (or below n, with n per byte), in either byte order.
 */
static uint64_t special_in(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) | ((w - ones * 0x20) & ~w) | w) & high;
}

/*
 * How many plain bytes begin the 8 of w (read from memory), given m =
 * special_in(w) != 0: on a little-endian machine the lowest high bit set marks
 * the first byte that is not plain (a borrow only marks bytes after it); else 0,
 * and the byte loop finds it.
 */
static size_t plain_prefix(uint64_t m)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(m) / 8;
#else
    (void)m;
    return 0;
#endif
}

/* The plain run from pos, 8 bytes at a time: the first byte not plain, or one of the last 7 bytes. */
static size_t plain_run(const unsigned char *p, size_t pos, size_t end)
{
    uint64_t w, m = 0;
    while (end - pos >= 8 && (memcpy(&w, p + pos, 8), (m = special_in(w)) == 0))
        pos += 8;
    return m != 0 ? pos + plain_prefix(m) : pos;
}
#endif

/* Whether \ and ch is one of JSON's two-character escapes. */
static int short_escape(unsigned char ch)
{
    switch (ch) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
        return 1;
    default:
        return 0;
    }
}

static long scan_string(struct cursor *c)
{
    size_t start = ++c->pos; /* after the quote */
    /* Locals, not the cursor: the compiler need not store and reload the position on every byte. */
    const unsigned char *p = c->p;
    size_t pos = start, end = c->end;
    int escaped = 0;
    for (;;) {
        /* The plain run (0x20 to 0x7f, no quote or backslash), most of a string: many bytes at a time, then byte by byte. */
        pos = plain_run(p, pos, end);
        while (pos < end && (unsigned char)(p[pos] - 0x20) < 0x60 && p[pos] != '"' && p[pos] != '\\')
            pos++;
        if (pos >= end)
            return -1;
        unsigned char ch = p[pos];
        if (ch == '"')
            break;
        if (ch < 0x20 || ch >= 0x80)
            return -1; /* control characters are invalid; UTF-8 is left to jansson's decoder */
        if (ch == '\\') {
            size_t u = pos + 1 < end && p[pos + 1] == 'u' ? u_escape_len(p + pos, end - pos) : 2;
            if (pos + 1 >= end || u == 0 || (u == 2 && !short_escape(p[pos + 1])))
                return -1; /* anything else is left to jansson */
            escaped = 1;
            pos += u;
            continue;
        }
        pos++;
    }
    c->pos = pos;
    long t = push(c, JSONSCAN_STRING, start);
    c->s->tokens[t].len = (uint32_t)(c->pos - start);
    c->s->tokens[t].escaped = (uint8_t)escaped;
    c->s->tokens[t].next = (uint32_t)c->s->len;
    c->pos++; /* the closing quote */
    return t;
}

static int is_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)? of at most 15 characters: what jansson reads without overflow. */
static long scan_number(struct cursor *c)
{
    size_t start = c->pos;
    if (c->pos < c->end && c->p[c->pos] == '-')
        c->pos++;
    if (c->pos >= c->end || !is_digit(c->p[c->pos]))
        return -1;
    if (c->p[c->pos] == '0') {
        c->pos++;
    } else {
        while (c->pos < c->end && is_digit(c->p[c->pos]))
            c->pos++;
    }
    if (c->pos < c->end && c->p[c->pos] == '.') {
        c->pos++;
        if (c->pos >= c->end || !is_digit(c->p[c->pos]))
            return -1;
        while (c->pos < c->end && is_digit(c->p[c->pos]))
            c->pos++;
    }
    if (c->pos < c->end && (c->p[c->pos] == 'e' || c->p[c->pos] == 'E'))
        return -1; /* exponents may overflow a double: jansson's call */
    if (c->pos - start > 15)
        return -1;
    long t = push(c, JSONSCAN_NUMBER, start);
    c->s->tokens[t].len = (uint32_t)(c->pos - start);
    c->s->tokens[t].next = (uint32_t)c->s->len;
    return t;
}

static long scan_literal(struct cursor *c, const char *word, enum jsonscan_type type)
{
    size_t n = strlen(word);
    if (c->end - c->pos < n || memcmp(c->p + c->pos, word, n) != 0)
        return -1;
    long t = push(c, type, c->pos);
    c->s->tokens[t].len = (uint32_t)n;
    c->s->tokens[t].next = (uint32_t)c->s->len;
    c->pos += n;
    return t;
}

static size_t decode_string(const char *p, uint32_t len, char *out);

struct key {
    const char *p;
    uint32_t len;
};

static int cmp_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->p, y->p, x->len);
}

/* Whether object obj has two members of one name (raw bytes, or decoded where a key has escapes: escaped_keys). */
static int has_duplicates(const struct jsonscan *s, long obj)
{
    uint32_t n = s->tokens[obj].count;
    if (n < 2)
        return 0;
    struct key small[16], *keys = n <= 16 ? small : util_malloc(n * sizeof(*keys));
    char **decoded = NULL; /* the escaped keys' names, freed below */
    size_t ndecoded = 0;
    long i = obj + 1;
    for (uint32_t k = 0; k < n; k++) {
        keys[k].p = s->text + s->tokens[i].start;
        keys[k].len = s->tokens[i].len;
        if (s->tokens[i].escaped) {
            decoded = util_realloc(decoded, (ndecoded + 1) * sizeof(*decoded));
            char *name = decoded[ndecoded++] = util_malloc((size_t)keys[k].len + 1);
            keys[k].len = (uint32_t)decode_string(keys[k].p, keys[k].len, name);
            keys[k].p = name;
        }
        i = (long)s->tokens[i + 1].next;
    }
    int dup = 0;
    if (n <= 16) {
        for (uint32_t a = 0; a < n && !dup; a++)
            for (uint32_t b = a + 1; b < n && !dup; b++)
                dup = cmp_key(&keys[a], &keys[b]) == 0;
    } else {
        qsort(keys, n, sizeof(*keys), cmp_key);
        for (uint32_t a = 1; a < n && !dup; a++)
            dup = cmp_key(&keys[a - 1], &keys[a]) == 0;
        free(keys);
    }
    for (size_t k = 0; k < ndecoded; k++)
        free(decoded[k]);
    free(decoded);
    return dup;
}

static long scan_value(struct cursor *c, int depth);

static long scan_container(struct cursor *c, int depth, int object)
{
    if (depth >= JSONSCAN_MAX_DEPTH)
        return -1;
    long t = push(c, object ? JSONSCAN_OBJECT : JSONSCAN_ARRAY, c->pos);
    unsigned char close = object ? '}' : ']';
    uint32_t count = 0;
    c->pos++;
    skip_ws(c);
    if (c->pos < c->end && c->p[c->pos] == close) {
        c->pos++;
    } else {
        for (;;) {
            if (object) {
                skip_ws(c);
                if (c->pos >= c->end || c->p[c->pos] != '"')
                    return -1;
                long k = scan_string(c);
                if (k < 0 || (c->s->tokens[k].escaped && !c->s->escaped_keys))
                    return -1; /* a key with escapes: jansson compares decoded names */
                skip_ws(c);
                if (c->pos >= c->end || c->p[c->pos] != ':')
                    return -1;
                c->pos++;
            }
            if (scan_value(c, depth + 1) < 0)
                return -1;
            count++;
            skip_ws(c);
            if (c->pos >= c->end)
                return -1;
            if (c->p[c->pos] == ',') {
                c->pos++;
                continue;
            }
            if (c->p[c->pos] != close)
                return -1;
            c->pos++;
            break;
        }
    }
    struct jsonscan_token *tok = &c->s->tokens[t];
    tok->count = count;
    tok->len = (uint32_t)(c->pos - tok->start);
    tok->next = (uint32_t)c->s->len;
    if (object && has_duplicates(c->s, t))
        return -1;
    return t;
}

static long scan_value(struct cursor *c, int depth)
{
    skip_ws(c);
    if (c->pos >= c->end)
        return -1;
    switch (c->p[c->pos]) {
    case '{':
        return scan_container(c, depth, 1);
    case '[':
        return scan_container(c, depth, 0);
    case '"':
        return scan_string(c);
    case 't':
        return scan_literal(c, "true", JSONSCAN_TRUE);
    case 'f':
        return scan_literal(c, "false", JSONSCAN_FALSE);
    case 'n':
        return scan_literal(c, "null", JSONSCAN_NULL);
    default:
        return scan_number(c);
    }
}

int jsonscan_parse(struct jsonscan *s, const char *text, size_t len)
{
    s->text = text;
    s->len = 0;
    if (len > UINT32_MAX)
        return -1;
    struct cursor c = {s, (const unsigned char *)text, 0, len};
    skip_ws(&c);
    if (c.pos >= c.end || c.p[c.pos] != '{')
        return -1;
    if (scan_value(&c, 0) != 0)
        return -1;
    skip_ws(&c);
    return c.pos == c.end ? 0 : -1;
}

int jsonscan_type(const struct jsonscan *s, long i)
{
    return i < 0 || (size_t)i >= s->len ? 0 : s->tokens[i].type;
}

int jsonscan_string_is(const struct jsonscan *s, long i, const char *value)
{
    if (jsonscan_type(s, i) != JSONSCAN_STRING || s->tokens[i].escaped)
        return 0;
    size_t n = strlen(value);
    return s->tokens[i].len == n && memcmp(s->text + s->tokens[i].start, value, n) == 0;
}

long jsonscan_get(const struct jsonscan *s, long obj, const char *key)
{
    if (jsonscan_type(s, obj) != JSONSCAN_OBJECT)
        return -1;
    long i = obj + 1;
    for (uint32_t k = 0; k < s->tokens[obj].count; k++) {
        if (jsonscan_string_is(s, i, key))
            return i + 1;
        i = (long)s->tokens[i + 1].next;
    }
    return -1;
}

/* The UTF-8 of the \u escape at p (checked by u_escape_len), written to out; returns the bytes written, *used the escape's. */
static size_t put_u_escape(const unsigned char *p, char *out, uint32_t *used)
{
    unsigned long cp = (unsigned long)hex4(p + 2);
    *used = 6;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)hex4(p + 8) - 0xdc00);
        *used = 12;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The text p[0..len) of a string with its escapes decoded (a \u one into UTF-8: never longer than the escape), into
   out (len bytes at least); returns its length. */
static size_t decode_string(const char *p, uint32_t len, char *out)
{
    size_t n = 0;
    for (uint32_t k = 0; k < len; k++) {
        char ch = p[k];
        if (ch == '\\' && p[k + 1] == 'u') {
            uint32_t used;
            n += put_u_escape((const unsigned char *)p + k, out + n, &used);
            k += used - 1;
            continue;
        }
        if (ch == '\\') {
            ch = p[++k];
            ch = ch == 'b' ? '\b' : ch == 'f' ? '\f' : ch == 'n' ? '\n' : ch == 'r' ? '\r' : ch == 't' ? '\t' : ch;
        }
        out[n++] = ch;
    }
    return n;
}

/* A string token's value: its text with its escapes decoded. */
static json_t *string_value(const struct jsonscan *s, const struct jsonscan_token *t)
{
    const char *p = s->text + t->start;
    if (!t->escaped)
        return json_stringn_nocheck(p, t->len); /* ASCII without control characters: valid UTF-8 */
    char small[256] = "", *buf = t->len <= sizeof(small) ? small : util_malloc(t->len);
    json_t *v = json_stringn_nocheck(buf, decode_string(p, t->len, buf));
    if (buf != small)
        free(buf);
    return v;
}

/* A number token's value: at most 15 characters without an exponent (scan_number), so neither overflows. */
static json_t *number_value(const struct jsonscan *s, const struct jsonscan_token *t)
{
    char buf[16];
    memcpy(buf, s->text + t->start, t->len);
    buf[t->len] = '\0';
    if (memchr(buf, '.', t->len) == NULL)
        return json_integer(strtoll(buf, NULL, 10));
    return json_real(strtod(buf, NULL));
}

/* Sets member key (a token: no NUL; its escapes decoded) of obj to v (stolen). */
static void set_member(json_t *obj, const struct jsonscan *s, long key, json_t *v)
{
    const struct jsonscan_token *k = &s->tokens[key];
    if (!k->escaped) {
        json_object_setn_new_nocheck(obj, s->text + k->start, k->len, v); /* ASCII without NUL: the raw key is its name */
        return;
    }
    char small[128] = "", *name = k->len < sizeof(small) ? small : util_malloc((size_t)k->len + 1);
    json_object_setn_new_nocheck(obj, name, decode_string(s->text + k->start, k->len, name), v);
    if (name != small)
        free(name);
}

json_t *jsonscan_value(const struct jsonscan *s, long i, int shape, jsonscan_shape_fn fn)
{
    int type = jsonscan_type(s, i);
    if (type == 0)
        return NULL;
    const struct jsonscan_token *t = &s->tokens[i];
    switch (type) {
    case JSONSCAN_OBJECT: {
        json_t *obj = json_object();
        long key = i + 1;
        for (uint32_t k = 0; k < t->count; k++) {
            int sub = shape == JSONSCAN_WHOLE ? JSONSCAN_WHOLE : fn(shape, s, key);
            if (sub != JSONSCAN_DROP)
                set_member(obj, s, key, jsonscan_value(s, key + 1, sub, fn));
            key = (long)s->tokens[key + 1].next;
        }
        return obj;
    }
    case JSONSCAN_ARRAY: {
        json_t *arr = json_array();
        long e = i + 1;
        for (uint32_t k = 0; k < t->count; k++) {
            int sub = shape == JSONSCAN_WHOLE ? JSONSCAN_WHOLE : fn(shape, s, -1);
            if (sub != JSONSCAN_DROP)
                json_array_append_new(arr, jsonscan_value(s, e, sub, fn));
            e = (long)s->tokens[e].next;
        }
        return arr;
    }
    case JSONSCAN_STRING:
        return string_value(s, t);
    case JSONSCAN_NUMBER:
        return number_value(s, t);
    case JSONSCAN_TRUE:
        return json_true();
    case JSONSCAN_FALSE:
        return json_false();
    case JSONSCAN_NULL:
        return json_null();
    default:
        return NULL;
    }
}
