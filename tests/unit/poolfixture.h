/*
 * poolfixture: cmocka setup and teardown giving each test a fresh shape pool
 * (shape.h) in *state, for test_shape and test_model. The teardown fails the
 * test when the pool holds anything but its resource names: what a test
 * interned it must release.
 */
#ifndef RAYGATE_TEST_POOLFIXTURE_H
#define RAYGATE_TEST_POOLFIXTURE_H

#include <stdlib.h>

#include "shape.h"

static int poolfixture_setup(void **state)
{
    struct shape_pool *p = malloc(sizeof(*p));
    shape_pool_init(p);
    *state = p;
    return 0;
}

static int poolfixture_teardown(void **state)
{
    struct shape_pool *p = *state;
    int clean = p->rls.len == 0 && p->scheds.len == 0 && p->strings.len == p->nresources;
    shape_pool_finish(p);
    free(p);
    return clean ? 0 : -1;
}

#endif
