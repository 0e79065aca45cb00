/*
 * libFuzzer harness: lib/gang's arithmetic on a RayCluster (JSON input). A
 * computed gang has at least one member and no negative resource, and its
 * canonical resource text parses back to the same list; the head's pod
 * request is never more than the whole gang's. An error names a field.
 * The same input as a legacy operator's RayCluster (lib/gang/legacy): a gang of at
 * least its head, minMember 1 + the workers of its groups (one per pod type),
 * non-negative resources; an error names a field and leaves nothing.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "legacy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                                \
    do {                                                                                                                           \
        if (!(cond)) {                                                                                                             \
            fprintf(stderr, "%s:%d: %s fails\n", __FILE__, __LINE__, #cond);                                                       \
            abort();                                                                                                               \
        }                                                                                                                          \
    } while (0)

/*
 * A denial names the field before its reason ("spec.x: must ..."). A field path
 * made of names from the object can fill the whole message, which is then cut
 * at its end (struct error's size) before the reason: that still names the field.
 */
static int names_field(const struct error *err)
{
    /* + 4: a cut drops a UTF-8 character it split. */
    return err->message[0] != '\0' && (strstr(err->message, ": ") != NULL || strlen(err->message) + 4 >= sizeof(err->message));
}

static void check_legacy(const json_t *rc_json)
{
    struct gang_spec gang;
    struct error err;
    gang_spec_init(&gang);
    if (legacy_gang_from_raycluster(rc_json, &gang, &err) != 0) {
        CHECK(names_field(&err));
        CHECK(gang.min_member == 0 && gang.min_resources.len == 0 && gang.ngroups == 0);
    } else {
        int64_t workers = 0;
        CHECK(gang.min_member >= 1);
        CHECK(gang.ngroups == json_array_size(json_object_get(json_object_get(rc_json, "spec"), "podTypes")));
        for (size_t i = 0; i < gang.ngroups; i++) {
            CHECK(gang.groups[i].pods >= 0 && gang.groups[i].name != NULL);
            workers += gang.groups[i].pods;
        }
        CHECK(gang.min_member == 1 + workers);
        for (size_t i = 0; i < gang.min_resources.len; i++)
            CHECK(gang.min_resources.items[i].quantity.value >= 0);
    }
    gang_spec_finish(&gang);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *rc_json = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (rc_json == NULL)
        return 0;
    struct gang_spec gang;
    struct error err;
    struct resources head, back;
    struct error rerr;
    gang_spec_init(&gang);
    resources_init(&head);
    resources_init(&back);

    if (gang_from_raycluster(rc_json, &gang, &err) != 0) {
        CHECK(names_field(&err));
        CHECK(gang.min_member == 0 && gang.min_resources.len == 0);
    } else {
        CHECK(gang.min_member >= 1);
        for (size_t i = 0; i < gang.min_resources.len; i++)
            CHECK(gang.min_resources.items[i].quantity.value >= 0);
        json_t *j = resources_to_json(&gang.min_resources);
        CHECK(resources_parse(&back, j, "minResources", RESOURCES_NONNEGATIVE, &rerr) == 0);
        CHECK(back.len == gang.min_resources.len);
        for (size_t i = 0; i < back.len; i++)
            CHECK(back.items[i].quantity.value == gang.min_resources.items[i].quantity.value);
        json_decref(j);

        const json_t *head_spec = json_object_get(
            json_object_get(json_object_get(json_object_get(rc_json, "spec"), "headGroupSpec"), "template"), "spec");
        if (!json_is_true(json_object_get(json_object_get(rc_json, "spec"), "enableInTreeAutoscaling")) &&
            gang_pod_request(head_spec, &head, &err) == 0) {
            for (size_t i = 0; i < head.len; i++) {
                const struct quantity *total = resources_get(&gang.min_resources, head.items[i].name);
                CHECK(head.items[i].quantity.value == 0 || (total != NULL && total->value >= head.items[i].quantity.value));
            }
        }
    }
    resources_finish(&back);
    resources_finish(&head);
    gang_spec_finish(&gang);
    check_legacy(rc_json);
    json_decref(rc_json);
    return 0;
}
