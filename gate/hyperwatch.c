#include "hyperwatch.h"

#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "log.h"
#include "util.h"

/* Events about a cluster-scoped object go in this namespace, its involvedObject's namespace empty (as for Nodes). */
#define CLUSTER_EVENTS_NS "default"

struct hyperwatch {
    struct hypernodes *set;
    json_t *told;    /* name -> "uid/g<generation>" (or "uid/<resourceVersion>") of the invalid version already reported */
    json_t *pending; /* [{name, uid, message}] to post */
};

struct hyperwatch *hyperwatch_create(void)
{
    struct hyperwatch *hw = util_calloc(1, sizeof(*hw));
    hw->set = hypernode_create();
    hw->told = json_object();
    hw->pending = json_array();
    return hw;
}

void hyperwatch_destroy(struct hyperwatch *hw)
{
    if (hw == NULL)
        return;
    hypernode_destroy(hw->set);
    json_decref(hw->told);
    json_decref(hw->pending);
    free(hw);
}

const struct hypernodes *hyperwatch_set(const struct hyperwatch *hw)
{
    return hw->set;
}

static const char *meta(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/* An invalid version of HyperNode name (object borrowed): said once per version. */
static void tell_invalid(struct hyperwatch *hw, const char *name, const json_t *object, const char *why)
{
    /* A version is its spec's: metadata.generation, which a label or annotation does not bump; else resourceVersion. */
    const char *uid = meta(object, "uid"), *rv = meta(object, "resourceVersion");
    const json_t *gen = json_object_get(json_object_get(object, "metadata"), "generation");
    char *version = json_is_integer(gen) ? util_strdupf("%s/g%lld", uid != NULL ? uid : "", (long long)json_integer_value(gen))
                                         : util_strdupf("%s/%s", uid != NULL ? uid : "", rv != NULL ? rv : "");
    const char *was = json_string_value(json_object_get(hw->told, name));
    if (was == NULL || strcmp(was, version) != 0) {
        log_warnf("HyperNode %s is invalid and ignored: %s", name, why);
        json_t *msg = json_sprintf("%s; raygate ignores this HyperNode until it is fixed", why);
        json_array_append_new(hw->pending,
                              json_pack("{s:s, s:s, s:o}", "name", name, "uid", uid != NULL ? uid : "", "message", msg));
        json_object_set_new(hw->told, name, json_string(version));
    }
    free(version);
}

void hyperwatch_record(struct hyperwatch *hw, enum kube_watch_event ev, const json_t *object)
{
    const char *name = meta(object, "name");
    if (name == NULL)
        return;
    if (ev == KUBE_WATCH_DELETED) {
        hypernode_delete(hw->set, name);
        json_object_del(hw->told, name);
        return;
    }
    struct error err = {{0}};
    if (hypernode_upsert(hw->set, object, &err) != 0)
        tell_invalid(hw, name, object, err.message);
    else if (json_object_get(hw->told, name) != NULL) {
        log_infof("HyperNode %s is valid again", name);
        json_object_del(hw->told, name);
    }
}

size_t hyperwatch_take_events(struct hyperwatch *hw, struct eventpost_list *l, const char *now, const char *instance)
{
    size_t n = json_array_size(hw->pending);
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(hw->pending, i);
        const char *uid = json_string_value(json_object_get(p, "uid"));
        struct events_object obj = {HYPERWATCH_API_VERSION, "HyperNode", "", json_string_value(json_object_get(p, "name")),
                                    uid[0] != '\0' ? uid : NULL};
        json_t *ev = events_build(&obj, "Warning", HYPERWATCH_REASON_INVALID, json_string_value(json_object_get(p, "message")), now,
                                  instance);
        json_object_set_new(json_object_get(ev, "metadata"), "namespace", json_string(CLUSTER_EVENTS_NS));
        eventpost_add_new(l, CLUSTER_EVENTS_NS, ev);
    }
    json_array_clear(hw->pending);
    return n;
}
