/*
 * libFuzzer harness: lib/wire/quantity. The input is one quantity string (the
 * first byte picks the unit). A parsed value must format within
 * QUANTITY_FORMAT_MAX and parse back to itself; a negated string parses to the
 * negated value (rounding is away from zero); add and mul agree with 128-bit
 * arithmetic and report overflow exactly when it happens.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                                \
    do {                                                                                                                           \
        if (!(cond)) {                                                                                                             \
            fprintf(stderr, "%s:%d: %s fails for \"%s\"\n", __FILE__, __LINE__, #cond, s);                                         \
            abort();                                                                                                               \
        }                                                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    enum quantity_unit unit = (data[0] & 1) ? QUANTITY_UNIT_MILLI : QUANTITY_UNIT_BASE;
    char s[4100], neg[4101], buf[QUANTITY_FORMAT_MAX + 8];
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    if (strlen(s) != size - 1)
        return 0; /* an embedded NUL: C strings cannot carry it */

    struct quantity q, r, n;
    struct error err;
    if (quantity_parse(s, unit, &q, &err) != 0) {
        CHECK(err.message[0] != '\0' && strchr(err.message, '\n') == NULL);
        return 0;
    }
    memset(buf, 'x', sizeof(buf));
    size_t len = quantity_format(&q, unit, buf, QUANTITY_FORMAT_MAX);
    CHECK(len < QUANTITY_FORMAT_MAX && strlen(buf) == len);
    CHECK(quantity_parse(buf, unit, &r, &err) == 0);
    CHECK(r.value == q.value);

    if (s[0] != '+' && s[0] != '-') {
        snprintf(neg, sizeof(neg), "-%s", s);
        CHECK(quantity_parse(neg, unit, &n, &err) == 0);
        CHECK(n.value == -q.value);
    }

    /* Arithmetic against 128-bit integers, with the parsed value and its canonical form. */
    __int128 sum = (__int128)q.value + r.value, product = (__int128)q.value * (int64_t)(size * 7919);
    struct quantity acc = q;
    int rc = quantity_add(&acc, &r);
    CHECK(rc == ((sum > INT64_MAX || sum < INT64_MIN) ? -1 : 0));
    CHECK(rc != 0 ? acc.value == q.value : acc.value == (int64_t)sum);
    acc = q;
    rc = quantity_mul(&acc, (int64_t)(size * 7919));
    CHECK(rc == ((product > INT64_MAX || product < INT64_MIN) ? -1 : 0));
    CHECK(rc != 0 ? acc.value == q.value : acc.value == (int64_t)product);
    return 0;
}
