/* heldnudge: the gate's writes of heldresume.h's nudge (heldnudge.h). */
#include "heldnudge.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "heldresume.h"
#include "log.h"
#include "util.h"

struct heldnudge {
    /* "namespace/name" -> the held generation last asked for (integer), until the RayCluster is deleted. Owned. */
    json_t *asked;
    /* Of asked, those not sent yet: "namespace/name" -> the generation. Owned. */
    json_t *pending;
};

struct heldnudge *heldnudge_create(void)
{
    struct heldnudge *n = util_calloc(1, sizeof(*n));
    n->asked = json_object();
    n->pending = json_object();
    return n;
}

void heldnudge_destroy(struct heldnudge *n)
{
    if (n == NULL)
        return;
    json_decref(n->asked);
    json_decref(n->pending);
    free(n);
}

/* Whether the cache holds a real pod of namespace_/name's gang (not one of its declared ones, declare.h). */
static int has_real_pod(const struct cache *c, const char *namespace_, const char *name)
{
    const struct cache_gang *g = cache_gang_get(c, namespace_, name);
    const struct cache_pod *p;
    if (g != NULL) {
        cache_gang_for_each_pod(p, g) {
            if (!declare_pod_is(p))
                return 1;
        }
    }
    return 0;
}

void heldnudge_observe(struct heldnudge *n, const struct cache *c, const json_t *cluster)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (name == NULL)
        return;
    char *key = util_strdupf("%s/%s", ns != NULL ? ns : "", name);
    int64_t gen;
    /* Asked once per held generation: an event of the RayCluster before the watch shows the nudge (a status update
       of KubeRay's) asks nothing again. The record goes with the RayCluster (heldnudge_forget). The object's rules
       first: the pods only then (the walk may pass all of a held gang's declared members). */
    if (heldresume_due(cluster, 0, &gen) && json_integer_value(json_object_get(n->asked, key)) != gen &&
        heldresume_due(cluster, (size_t)has_real_pod(c, ns != NULL ? ns : "", name), &gen)) {
        json_object_set_new(n->asked, key, json_integer(gen));
        json_object_set_new(n->pending, key, json_integer(gen));
    }
    free(key);
}

void heldnudge_forget(struct heldnudge *n, const char *namespace_, const char *name)
{
    char *key = util_strdupf("%s/%s", namespace_, name);
    json_object_del(n->asked, key);
    json_object_del(n->pending, key);
    free(key);
}

/* Writes the nudge of RayCluster key ("namespace/name") at gen; 0, or -1 (logged). */
static int send_one(struct kube_client *k, const char *key, int64_t gen)
{
    const char *slash = strchr(key, '/');
    char *path = util_strdupf("/apis/ray.io/v1/namespaces/%.*s/rayclusters/%s", (int)(slash - key), key, slash + 1);
    json_t *patch = heldresume_patch(gen);
    struct kube_response resp;
    kube_client_response_init(&resp);
    int rc = kube_patch(k, path, KUBE_PATCH_MERGE, patch, &resp);
    if (rc != 0)
        log_warnf("held RayCluster %s: telling KubeRay it is resumed: %s", key, resp.message);
    else
        log_infof("held RayCluster %s: KubeRay told it is resumed (held generation %" PRId64 ")", key, gen);
    kube_client_response_finish(&resp);
    json_decref(patch);
    free(path);
    return rc;
}

size_t heldnudge_send(struct heldnudge *n, struct kube_client *k, struct cacheguard *guard, int (*may_write)(void *arg), void *arg)
{
    cacheguard_lock(guard);
    json_t *todo = n->pending; /* owned here from now */
    n->pending = json_object();
    cacheguard_unlock(guard);
    size_t sent = 0;
    const char *key;
    json_t *gen;
    json_object_foreach(todo, key, gen)
    {
        if (!may_write(arg))
            break;
        sent += send_one(k, key, json_integer_value(gen)) == 0;
    }
    json_decref(todo);
    return sent;
}
