#include "quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/*
 * Exact arithmetic without a bignum: the number is kept as a short decimal
 * digit string D with a power of ten, multiplied by its binary suffix through
 * repeated doubling, and split at the unit's decimal point. Digits far below
 * the unit are folded into one "sticky" digit, which keeps the ceiling exact:
 * with FRACTION_KEEP >= 60 (the largest binary exponent), every integer lies on
 * the grid of truncated values, and the sticky digit lands strictly inside the
 * same grid cell as the true value.
 */
#define FRACTION_KEEP 62
#define DIGITS_MAX 128 /* 19 integer + FRACTION_KEEP + 1 digits, times 2^60 (19 more) */

static void copy_sanitized(char *dst, size_t size, const char *s)
{
    /* The message is read by a user in one line: no control bytes, bounded. */
    size_t n = 0;
    for (; *s != '\0' && n + 1 < size; s++)
        dst[n++] = (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\') ? *s : '?';
    if (*s != '\0' && n >= 3) {
        dst[n - 3] = dst[n - 2] = dst[n - 1] = '.';
    }
    dst[n] = '\0';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Interprets a suffix the way suffix.go does: table first, then e/E and a signed integer. */
static int interpret_suffix(const char *suf, int64_t *e10, int *e2, enum quantity_format *format)
{
    static const struct {
        const char *s;
        int e10;
        int e2;
    } table[] = {
        {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
        {"P", 15, 0}, {"E", 18, 0}, {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(suf, table[i].s) == 0) {
            *e10 = table[i].e10;
            *e2 = table[i].e2;
            *format = table[i].e2 != 0 ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI;
            return 0;
        }
    }
    if (suf[0] != 'e' && suf[0] != 'E')
        return -1;
    const char *p = suf + 1;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!is_digit(*p))
        return -1;
    int64_t v = 0;
    for (; is_digit(*p); p++) {
        /* Beyond int32 ParseQuantity truncates the exponent; refuse rather than guess. */
        v = v * 10 + (*p - '0');
        if (v > INT32_MAX)
            return -1;
    }
    if (*p != '\0')
        return -1;
    *e10 = neg ? -v : v;
    *e2 = 0;
    *format = QUANTITY_DECIMAL_EXPONENT;
    return 0;
}

/* N = D * 2^e2, by doubling the decimal digits[0..*n) in place (room for DIGITS_MAX); -1 when N does not fit. */
static int double_digits(char *digits, size_t *n, int e2)
{
    for (int i = 0; i < e2; i++) {
        int carry = 0;
        for (size_t j = *n; j-- > 0;) {
            int d = digits[j] * 2 + carry;
            digits[j] = (char)(d % 10);
            carry = d / 10;
        }
        if (carry) {
            if (*n == DIGITS_MAX)
                return -1;
            memmove(digits + 1, digits, *n);
            digits[0] = (char)carry;
            (*n)++;
        }
    }
    return 0;
}

/* How a parse ended: its error message is written in one place, quantity_parse. */
enum parse_result { PARSED, INVALID, TOO_LARGE };

/* A quantity's text taken apart: sign, integer and fraction digits, and what its suffix means. */
struct number {
    int neg;
    const char *int_start, *frac_start;
    size_t int_len, frac_len;
    int64_t e10;
    int e2;
    enum quantity_format format;
};

/* Reads sign, digits, point and suffix of s into num. -1 when the suffix is not one. */
static int lex(const char *s, struct number *num)
{
    const char *p = s;
    num->neg = 0;
    if (*p == '+' || *p == '-')
        num->neg = *p++ == '-';
    num->int_start = p;
    while (is_digit(*p))
        p++;
    num->int_len = (size_t)(p - num->int_start);
    num->frac_start = p;
    num->frac_len = 0;
    if (*p == '.') {
        num->frac_start = ++p;
        while (is_digit(*p))
            p++;
        num->frac_len = (size_t)(p - num->frac_start);
    }
    return interpret_suffix(p, &num->e10, &num->e2, &num->format);
}

/* Digit i of the digit sequence: the integer part, then the fraction. */
static char digit_at(const struct number *num, size_t i)
{
    return i < num->int_len ? num->int_start[i] : num->frac_start[i - num->int_len];
}

/*
 * D, the digit sequence without leading or trailing zeros, into digits[0..*n)
 * (values 0-9), with *exp such that the value in the unit is D * 10^exp before
 * the binary factor. *n is 0 when the number is zero. TOO_LARGE when it cannot
 * fit an int64 whatever the binary factor.
 */
static enum parse_result significant_digits(const struct number *num, enum quantity_unit unit, char *digits, size_t *n,
                                            int64_t *exp)
{
    size_t total = num->int_len + num->frac_len;
    size_t first = 0;
    while (first < total && digit_at(num, first) == '0')
        first++;
    *n = 0;
    if (first == total)
        return PARSED;
    size_t last = total - 1;
    while (digit_at(num, last) == '0')
        last--;
    int64_t len = (int64_t)(last - first + 1);
    int64_t e = num->e10 - (int64_t)num->frac_len + (int64_t)(total - 1 - last) + (unit == QUANTITY_UNIT_MILLI ? 3 : 0);

    /* At least 10^(len-1+exp) before the binary factor: 10^19 no longer fits. */
    if (len - 1 + e >= 19)
        return TOO_LARGE;
    if (e < -FRACTION_KEEP) {
        /* Keep the digits down to fraction place FRACTION_KEEP, then a sticky 1 (what was dropped is non-zero). */
        int64_t keep = len + e + FRACTION_KEEP;
        *n = keep > 0 ? (size_t)keep : 0;
        for (size_t i = 0; i < *n; i++)
            digits[i] = (char)(digit_at(num, first + i) - '0');
        digits[(*n)++] = 1;
        e = -FRACTION_KEEP - 1;
    } else {
        /* len <= 19 - exp <= 19 + FRACTION_KEEP here. */
        *n = (size_t)len;
        for (size_t i = 0; i < *n; i++)
            digits[i] = (char)(digit_at(num, first + i) - '0');
    }
    *exp = e;
    return PARSED;
}

/*
 * Splits digits[0..n) * 10^exp at the unit's point: *value is the integer part,
 * plus one when any fraction remains (the ceiling); *int_digits its digit count
 * (may be negative). TOO_LARGE beyond INT64_MAX.
 */
static enum parse_result ceiling(const char *digits, size_t n, int64_t exp, uint64_t *value, int64_t *int_digits)
{
    *int_digits = (int64_t)n + exp;
    if (*int_digits > 19)
        return TOO_LARGE;
    uint64_t v = 0;
    int frac = 0;
    for (int64_t i = 0; i < *int_digits; i++) {
        int d = i < (int64_t)n ? digits[i] : 0;
        v = v * 10 + (uint64_t)d; /* at most 19 digits: fits in uint64 */
    }
    for (int64_t i = *int_digits < 0 ? 0 : *int_digits; i < (int64_t)n; i++)
        frac |= digits[i] != 0;
    v += (uint64_t)frac;
    if (v > (uint64_t)INT64_MAX)
        return TOO_LARGE;
    *value = v;
    return PARSED;
}

/*
 * The common quantity ("8", "32Gi", "500m" of cpu) in a few instructions: at
 * most 15 digits and a suffix that scales it up by a whole factor in unit.
 * Returns 1 with out set as parse() would; 0 for anything else (a sign, a
 * point, a suffix that divides, an overflow), left to parse().
 */
static int parse_plain(const char *s, enum quantity_unit unit, struct quantity *out)
{
    const char *p = s;
    int64_t v = 0, e10;
    int e2;
    enum quantity_format format;
    while (is_digit(*p) && p - s < 15)
        v = v * 10 + (*p++ - '0');
    /* The suffix as the exact path reads it (interpret_suffix), its power of ten counted in the unit. */
    if (p == s || is_digit(*p) || interpret_suffix(p, &e10, &e2, &format) != 0)
        return 0;
    e10 += unit == QUANTITY_UNIT_MILLI ? 3 : 0;
    if (e10 < 0 || e10 > 18)
        return 0; /* a suffix that divides (the ceiling's job), or surely too large */
    int64_t factor = (int64_t)1 << e2, value;
    for (; e10 > 0; e10--) {
        if (__builtin_mul_overflow(factor, 10, &factor))
            return 0;
    }
    if (__builtin_mul_overflow(v, factor, &value))
        return 0;
    out->value = value;
    out->format = format; /* a binary suffix on a whole number is at least 1Ki: binary stays binary */
    return 1;
}

/* quantity_parse without the message: out is written only when PARSED. */
static enum parse_result parse(const char *s, enum quantity_unit unit, struct quantity *out)
{
    struct number num;
    if (s != NULL && parse_plain(s, unit, out))
        return PARSED;
    if (s == NULL || *s == '\0' || lex(s, &num) != 0)
        return INVALID;
    char digits[DIGITS_MAX];
    size_t n;
    int64_t exp, int_digits;
    uint64_t v;
    enum parse_result r = significant_digits(&num, unit, digits, &n, &exp);
    if (r != PARSED)
        return r;
    if (n == 0) {
        out->value = 0;
        out->format = num.format;
        return PARSED;
    }
    if (double_digits(digits, &n, num.e2) != 0)
        return TOO_LARGE;
    if ((r = ceiling(digits, n, exp, &v, &int_digits)) != PARSED)
        return r;

    /* Below one (in the base unit) ParseQuantity stops calling a number binary. */
    int64_t base_int_digits = int_digits - (unit == QUANTITY_UNIT_MILLI ? 3 : 0);
    out->format = num.format == QUANTITY_BINARY_SI && base_int_digits <= 0 ? QUANTITY_DECIMAL_SI : num.format;
    out->value = num.neg ? -(int64_t)v : (int64_t)v;
    return PARSED;
}

int quantity_parse(const char *s, enum quantity_unit unit, struct quantity *out, struct error *err)
{
    enum parse_result r = parse(s, unit, out);
    if (r == PARSED)
        return 0;
    char shown[48];
    copy_sanitized(shown, sizeof(shown), s == NULL ? "" : s);
    if (r == TOO_LARGE)
        error_setf(err, "quantity \"%s\" is too large", shown);
    else
        error_setf(err, "invalid quantity \"%s\"", shown);
    return -1;
}

size_t quantity_format(const struct quantity *q, enum quantity_unit unit, char *buf, size_t size)
{
    int64_t v = q->value;
    int64_t per = unit == QUANTITY_UNIT_MILLI ? 1000 : 1;
    int n;
    if (v == 0) {
        n = snprintf(buf, size, "0");
        return n < 0 ? 0 : (size_t)n;
    }
    enum quantity_format format = q->format;
    if (format == QUANTITY_BINARY_SI) {
        /* CanonicalizeBytes: small or fractional binary values are shown in decimal. */
        if ((v > -1024 * per && v < 1024 * per) || v % per != 0) {
            format = QUANTITY_DECIMAL_SI;
        } else {
            static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
            int64_t m = v / per;
            int e = 0;
            while (m % 1024 == 0 && e < 6) {
                m /= 1024;
                e++;
            }
            n = snprintf(buf, size, "%" PRId64 "%s", m, bin[e]);
            return n < 0 ? 0 : (size_t)n;
        }
    }
    int64_t m = v;
    int exp = unit == QUANTITY_UNIT_MILLI ? -3 : 0;
    while (m % 10 == 0) {
        m /= 10;
        exp++;
    }
    /* Down to a multiple of three; never below the unit's own exponent, so m cannot overflow. */
    while (exp % 3 != 0) {
        m *= 10;
        exp--;
    }
    if (format == QUANTITY_DECIMAL_EXPONENT) {
        if (exp == 0)
            n = snprintf(buf, size, "%" PRId64, m);
        else
            n = snprintf(buf, size, "%" PRId64 "e%d", m, exp);
    } else {
        static const char *const dec[] = {"m", "", "k", "M", "G", "T", "P", "E"};
        n = snprintf(buf, size, "%" PRId64 "%s", m, dec[exp / 3 + 1]);
    }
    return n < 0 ? 0 : (size_t)n;
}

int quantity_add(struct quantity *acc, const struct quantity *q)
{
    int64_t sum;
    if (__builtin_add_overflow(acc->value, q->value, &sum))
        return -1;
    if (acc->value == 0)
        acc->format = q->format;
    acc->value = sum;
    return 0;
}

int quantity_mul(struct quantity *q, int64_t factor)
{
    int64_t product;
    if (__builtin_mul_overflow(q->value, factor, &product))
        return -1;
    q->value = product;
    return 0;
}
