/*
 * clicases: what the kubectl-raygate unit tests share: a case's snapshot
 * (tests/fixtures/cli/<file>) and its clock.
 */
#ifndef RAYGATE_TEST_CLICASES_H
#define RAYGATE_TEST_CLICASES_H

#include <jansson.h>

#include "fixtures.h"
#include "view.h"

/* The snapshot a case names (new reference). */
static inline json_t *clicase_snapshot(const json_t *c)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "cli/%s", json_string_value(json_object_get(c, "snapshot")));
    return fixture_json(rel);
}

/* The case's "now" in unix seconds (0 when it has none). */
static inline long long clicase_now(const json_t *c)
{
    const char *now = json_string_value(json_object_get(c, "now"));
    return now != NULL ? view_parse_time(now) : 0;
}

/* The case's string field, or NULL when absent or null. */
static inline const char *clicase_str(const json_t *c, const char *key)
{
    return json_string_value(json_object_get(c, key));
}

#endif
