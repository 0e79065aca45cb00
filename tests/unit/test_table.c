#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct entry {
    struct table_node node;
    int key;
};

static uint64_t key_hash(int key)
{
    return table_hash_bytes(TABLE_HASH_SEED, &key, sizeof(key));
}

/* Calls of same_key, to see that table_find asks only about entries of the hash it looks for. */
static int same_calls;

static int same_key(const struct table_node *n, const void *key)
{
    same_calls++;
    return TABLE_CONTAINER_OF(n, struct entry, node)->key == *(const int *)key;
}

static struct entry *find(const struct table *t, int key)
{
    struct table_node *n = table_find(t, key_hash(key), same_key, &key);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct entry, node) : NULL;
}

static int setup(void **state)
{
    struct table *t = malloc(sizeof(*t));
    table_init(t);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    table_finish(*state);
    free(*state);
    return 0;
}

/* FNV-1a's published values, and the NUL that keeps "a"+"bc" apart from "ab"+"c". */
static void test_hash(void **state)
{
    (void)state;
    assert_int_equal(table_hash_bytes(TABLE_HASH_SEED, "", 0), 0xcbf29ce484222325ULL);
    assert_int_equal(table_hash_bytes(TABLE_HASH_SEED, "a", 1), 0xaf63dc4c8601ec8cULL);
    assert_int_equal(table_hash_str(TABLE_HASH_SEED, "a"), table_hash_bytes(TABLE_HASH_SEED, "a", 2));
    assert_int_not_equal(table_hash_str(table_hash_str(TABLE_HASH_SEED, "a"), "bc"),
                         table_hash_str(table_hash_str(TABLE_HASH_SEED, "ab"), "c"));
}

/* Entries stay findable across the growths 1000 of them cause; removal takes out one, and only once. */
static void test_insert_find_remove(void **state)
{
    struct table *t = *state;
    enum { N = 1000 };
    struct entry *e = calloc(N, sizeof(*e));
    for (int i = 0; i < N; i++) {
        e[i].key = i;
        e[i].node.hash = key_hash(i);
        table_insert(t, &e[i].node);
    }
    assert_int_equal(t->len, N);
    assert_true(t->nbuckets >= N);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(find(t, i), &e[i]);
    assert_null(find(t, N));
    table_remove(t, &e[500].node);
    table_remove(t, &e[500].node);
    assert_int_equal(t->len, N - 1);
    assert_null(find(t, 500));
    assert_ptr_equal(find(t, 501), &e[501]);
    free(e);
}

/*
 * table_find matches the hash and the key both: entries that share a bucket,
 * or a hash, with the one looked for are passed over, and same is asked only
 * about entries of the very hash.
 */
static void test_find(void **state)
{
    struct table *t = *state;
    struct entry e[] = {{{NULL, 16}, 1}, {{NULL, 16}, 2}, {{NULL, 32}, 3}, {{NULL, 0}, 4}};
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
        table_insert(t, &e[i].node); /* 16 buckets: all four in bucket 0 */
    int key = 1;
    assert_ptr_equal(table_find(t, 16, same_key, &key), &e[0].node);
    key = 2;
    assert_ptr_equal(table_find(t, 16, same_key, &key), &e[1].node);
    key = 3;
    same_calls = 0;
    assert_null(table_find(t, 16, same_key, &key)); /* key 3 is there, under another hash */
    assert_int_equal(same_calls, 2);                /* entries 1 and 2, not 3 nor 4 */
    assert_ptr_equal(table_find(t, 32, same_key, &key), &e[2].node);
    key = 5;
    assert_null(table_find(t, 16, same_key, &key));
    assert_null(table_find(t, 48, same_key, &key));
    table_remove(t, &e[0].node);
    key = 1;
    assert_null(table_find(t, 16, same_key, &key));
}

/* table_next visits every entry once, and says NULL after the last and for an empty table. */
static void test_next(void **state)
{
    struct table *t = *state;
    assert_null(table_next(t, NULL));
    enum { N = 40 };
    struct entry e[N];
    for (int i = 0; i < N; i++) {
        e[i].key = i;
        e[i].node.hash = (uint64_t)i * 16; /* many in one bucket: chains are walked too */
        table_insert(t, &e[i].node);
    }
    int seen[N] = {0}, count = 0;
    for (struct table_node *n = table_next(t, NULL); n != NULL; n = table_next(t, n)) {
        seen[TABLE_CONTAINER_OF(n, struct entry, node)->key]++;
        count++;
    }
    assert_int_equal(count, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
}

/* Equal strings intern to one pointer, counted: the string lives until its last release. */
static void test_intern(void **state)
{
    struct table *t = *state;
    char buf[8];
    strcpy(buf, "gpu");
    const char *a = table_intern(t, "gpu");
    const char *b = table_intern(t, buf);
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, buf);
    assert_string_equal(a, "gpu");
    const char *cpu = table_intern(t, "cpu");
    assert_ptr_not_equal(cpu, a);
    assert_null(table_intern(t, NULL));
    assert_int_equal(t->len, 2);
    table_release(t, a);
    assert_int_equal(t->len, 2);
    table_release(t, b);
    assert_int_equal(t->len, 1);
    table_release(t, NULL);
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        table_intern(t, name);
    }
    assert_int_equal(t->len, 101);
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        const char *s = table_intern(t, name);
        table_release(t, s);
        table_release(t, s);
    }
    assert_int_equal(t->len, 1);
    table_release(t, cpu);
    assert_int_equal(t->len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash),
        cmocka_unit_test_setup_teardown(test_insert_find_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intern, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
