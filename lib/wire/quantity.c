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

static int fail(struct error *err, int too_large, const char *s)
{
    char shown[48];
    copy_sanitized(shown, sizeof(shown), s);
    if (too_large)
        snprintf(err->message, sizeof(err->message), "quantity \"%s\" is too large", shown);
    else
        snprintf(err->message, sizeof(err->message), "invalid quantity \"%s\"", shown);
    return -1;
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
        {"", 0, 0},   {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},
        {"T", 12, 0}, {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40},
        {"Pi", 0, 50}, {"Ei", 0, 60},
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

int quantity_parse(const char *s, enum quantity_unit unit, struct quantity *out, struct error *err)
{
    if (s == NULL || *s == '\0')
        return fail(err, 0, s == NULL ? "" : s);

    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    const char *int_start = p;
    while (is_digit(*p))
        p++;
    const char *int_end = p;
    const char *frac_start = p, *frac_end = p;
    if (*p == '.') {
        frac_start = ++p;
        while (is_digit(*p))
            p++;
        frac_end = p;
    }

    int64_t e10;
    int e2;
    enum quantity_format format;
    if (interpret_suffix(p, &e10, &e2, &format) != 0)
        return fail(err, 0, s);

    /* The digit sequence (integer part then fraction) without leading or trailing zeros: D. */
    size_t int_len = (size_t)(int_end - int_start), total = int_len + (size_t)(frac_end - frac_start);
#define DIGIT_AT(i) ((i) < int_len ? int_start[(i)] : frac_start[(i) - int_len])
    size_t first = 0;
    while (first < total && DIGIT_AT(first) == '0')
        first++;
    if (first == total) {
        out->value = 0;
        out->format = format;
        return 0;
    }
    size_t last = total - 1;
    while (DIGIT_AT(last) == '0')
        last--;
    int64_t len = (int64_t)(last - first + 1);
    /* value in the unit = D * 10^exp * 2^e2 */
    int64_t exp = e10 - (int64_t)(frac_end - frac_start) + (int64_t)(total - 1 - last) + (unit == QUANTITY_UNIT_MILLI ? 3 : 0);

    /* At least 10^(len-1+exp) before the binary factor: 10^19 no longer fits. */
    if (len - 1 + exp >= 19)
        return fail(err, 1, s);

    char digits[DIGITS_MAX];
    size_t n;
    if (exp < -FRACTION_KEEP) {
        /* Keep the digits down to fraction place FRACTION_KEEP, then a sticky 1 (what was dropped is non-zero). */
        int64_t keep = len + exp + FRACTION_KEEP;
        n = keep > 0 ? (size_t)keep : 0;
        for (size_t i = 0; i < n; i++)
            digits[i] = (char)(DIGIT_AT(first + i) - '0');
        digits[n++] = 1;
        exp = -FRACTION_KEEP - 1;
    } else {
        /* len <= 19 - exp <= 19 + FRACTION_KEEP here. */
        n = (size_t)len;
        for (size_t i = 0; i < n; i++)
            digits[i] = (char)(DIGIT_AT(first + i) - '0');
    }
#undef DIGIT_AT

    if (double_digits(digits, &n, e2) != 0)
        return fail(err, 1, s);

    /* Split at the unit's point: integer digits, and whether any fraction remains. */
    int64_t int_digits = (int64_t)n + exp;
    if (int_digits > 19)
        return fail(err, 1, s);
    uint64_t v = 0;
    int frac = 0;
    for (int64_t i = 0; i < int_digits; i++) {
        int d = i < (int64_t)n ? digits[i] : 0;
        v = v * 10 + (uint64_t)d; /* at most 19 digits: fits in uint64 */
    }
    for (int64_t i = int_digits < 0 ? 0 : int_digits; i < (int64_t)n; i++)
        frac |= digits[i] != 0;
    v += (uint64_t)frac;
    if (v > (uint64_t)INT64_MAX)
        return fail(err, 1, s);

    /* Below one (in the base unit) ParseQuantity stops calling a number binary. */
    int64_t base_int_digits = int_digits - (unit == QUANTITY_UNIT_MILLI ? 3 : 0);
    if (format == QUANTITY_BINARY_SI && base_int_digits <= 0)
        format = QUANTITY_DECIMAL_SI;

    out->value = neg ? -(int64_t)v : (int64_t)v;
    out->format = format;
    return 0;
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
