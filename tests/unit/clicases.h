/*
 * clicases: what the kubectl-raygate unit tests share: a case's snapshot
 * (tests/fixtures/cli/<file>) and its clock.
 */
#ifndef RAYGATE_TEST_CLICASES_H
#define RAYGATE_TEST_CLICASES_H

#include <string.h>

#include <jansson.h>

#include "domains.h"
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

/* A domains case's query: its "key", "hypernodes" and "tier" (strings borrowed from c). */
static inline struct domains_query clicase_domains_query(const json_t *c)
{
    struct domains_query q = {.key = clicase_str(c, "key"),
                              .hypernodes = json_is_true(json_object_get(c, "hypernodes")),
                              .tier = (int32_t)json_integer_value(json_object_get(c, "tier"))};
    return q;
}

/* Every Unschedulable message of snapshot rewritten to a nonsense text of its own (what the gate might say one day). */
static inline void clicase_scramble_messages(json_t *snapshot)
{
    size_t i, k;
    json_t *pg, *cond;
    json_array_foreach(json_object_get(snapshot, "podGroups"), i, pg)
    {
        json_array_foreach(json_object_get(json_object_get(pg, "status"), "conditions"), k, cond)
        {
            if (json_object_get(cond, "message") != NULL)
                json_object_set_new(cond, "message", json_sprintf("wibble %zu: frobnicated the quux, 7 of 2 sprockets", i));
        }
    }
}

/*
 * Calls check for every case of tests/fixtures/cli/reasons-cases.json twice:
 * with its snapshot as written, then with every message rewritten. snap is
 * the case's snapshot (check may change it); where labels failures.
 */
static inline void clicase_each_reason(void (*check)(const json_t *c, json_t *snap, const char *where, void *ctx), void *ctx)
{
    json_t *cases = fixture_json("cli/reasons-cases.json");
    for (int scrambled = 0; scrambled <= 1; scrambled++) {
        size_t i;
        json_t *c;
        json_array_foreach(cases, i, c)
        {
            char where[300];
            json_t *snap = clicase_snapshot(c);
            snprintf(where, sizeof(where), "%s%s", clicase_str(c, "comment"), scrambled ? " (messages rewritten)" : "");
            if (scrambled)
                clicase_scramble_messages(snap);
            check(c, snap, where, ctx);
            json_decref(snap);
        }
    }
    json_decref(cases);
}

/* lines (borrowed) with "{message}" replaced by message (new array). */
static inline json_t *clicase_with_message(const json_t *lines, const char *message)
{
    json_t *out = json_array();
    size_t i;
    const json_t *line;
    json_array_foreach(lines, i, line)
    {
        const char *s = json_string_value(line), *at = strstr(s, "{message}");
        if (at == NULL)
            json_array_append(out, (json_t *)line);
        else
            json_array_append_new(out, json_sprintf("%.*s%s%s", (int)(at - s), s, message, at + strlen("{message}")));
    }
    return out;
}

#endif
