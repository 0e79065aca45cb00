#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "marks.h"

/* Slots: a power of two, at least 16 and twice the objects. */
static void test_slots(void **state)
{
    (void)state;
    assert_int_equal(marks_slots(0), 16);
    assert_int_equal(marks_slots(8), 16);
    assert_int_equal(marks_slots(9), 32);
    assert_int_equal(marks_slots(1000), 2048);
}

/* Bits accumulate per key; keys that collide stay apart; unmarked keys have none. */
static void test_set_get(void **state)
{
    (void)state;
    enum { N = 500 };
    size_t slots = marks_slots(N);
    const void **keys = calloc(slots, sizeof(*keys));
    uint8_t *bits = malloc(slots); /* any content */
    for (size_t i = 0; i < slots; i++)
        bits[i] = 0xff;
    struct marks m;
    marks_init(&m, keys, bits, slots);
    char objs[N + 1];
    for (int i = 0; i < N; i++)
        marks_set(&m, &objs[i], i % 2 ? MARKS_ADMITTED : MARKS_TAIL);
    marks_set(&m, &objs[0], MARKS_ADMITTED);
    assert_int_equal(marks_get(&m, &objs[0]), MARKS_ADMITTED | MARKS_TAIL);
    for (int i = 1; i < N; i++)
        assert_int_equal(marks_get(&m, &objs[i]), i % 2 ? MARKS_ADMITTED : MARKS_TAIL);
    assert_int_equal(marks_get(&m, &objs[N]), 0);
    free(bits);
    free(keys);
}

/* Clearing removes only the bits named, keeps a collided neighbour reachable, and ignores an unmarked key. */
static void test_clear(void **state)
{
    (void)state;
    size_t slots = marks_slots(4);
    const void **keys = calloc(slots, sizeof(*keys));
    uint8_t *bits = malloc(slots);
    struct marks m;
    marks_init(&m, keys, bits, slots);
    char objs[40];
    for (int i = 0; i < 8; i++)
        marks_set(&m, &objs[i * 5], MARKS_ADMITTED | MARKS_TAIL);
    marks_clear(&m, &objs[0], MARKS_ADMITTED);
    assert_int_equal(marks_get(&m, &objs[0]), MARKS_TAIL);
    for (int i = 1; i < 8; i++)
        assert_int_equal(marks_get(&m, &objs[i * 5]), MARKS_ADMITTED | MARKS_TAIL);
    marks_clear(&m, &objs[1], MARKS_ADMITTED); /* never marked */
    assert_int_equal(marks_get(&m, &objs[1]), 0);
    free(bits);
    free(keys);
}

/* Many keys (the filter, MARKS_FILTER_WORDS, mostly set): marked ones keep their bits, the others have none; a new init
   forgets them all. */
static void test_many(void **state)
{
    (void)state;
    enum { N = 60000 };
    size_t slots = marks_slots(N);
    const void **keys = calloc(slots, sizeof(*keys));
    uint8_t *bits = malloc(slots);
    struct marks *m = malloc(sizeof(*m));
    char *objs = malloc(2 * N);
    marks_init(m, keys, bits, slots);
    for (int i = 0; i < N; i++)
        marks_set(m, &objs[2 * i], MARKS_TAIL);
    for (int i = 0; i < N; i++) {
        assert_int_equal(marks_get(m, &objs[2 * i]), MARKS_TAIL);
        assert_int_equal(marks_get(m, &objs[2 * i + 1]), 0);
    }
    memset(keys, 0, slots * sizeof(*keys));
    marks_init(m, keys, bits, slots);
    for (int i = 0; i < N; i++)
        assert_int_equal(marks_get(m, &objs[2 * i]), 0);
    free(objs);
    free(m);
    free(bits);
    free(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_set_get),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
