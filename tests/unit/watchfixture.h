/*
 * watchfixture: one watch event fed through watchstream (optionally with a
 * jsonscan shape, as the programs' watches set it), for the tests of what a
 * watch builds of an object. Included after cmocka.h.
 */
#ifndef RAYGATE_TEST_WATCHFIXTURE_H
#define RAYGATE_TEST_WATCHFIXTURE_H

#include <string.h>

#include <jansson.h>

#include "watchstream.h"

struct watchfixture_got {
    json_t *object; /* owned: the last event's object */
    int n;          /* events seen */
};

static inline int watchfixture_keep(void *arg, const struct watchstream_event *ev)
{
    struct watchfixture_got *g = arg;
    json_decref(g->object);
    g->object = json_incref(ev->object);
    g->n++;
    return 0;
}

/* The object of the one event in text (a new reference), built with shape fn (NULL: whole); fails the test otherwise. */
static inline json_t *watchfixture_one(const char *text, int shape, jsonscan_shape_fn fn)
{
    struct watchfixture_got g = {0};
    struct watchstream ws;
    struct error err = {{0}};
    watchstream_init(&ws, 0, watchfixture_keep, &g);
    if (fn != NULL)
        watchstream_set_shape(&ws, shape, fn);
    assert_int_equal(watchstream_feed(&ws, text, strlen(text), &err), 0);
    watchstream_finish(&ws);
    assert_int_equal(g.n, 1);
    return g.object;
}

#endif
