#include "release.h"

#include <stdlib.h>

#include "declare.h"
#include "heldsuspend.h"
#include "log.h"
#include "util.h"

void release_list_finish(struct release_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].path);
        free(l->items[i].uid);
    }
    free(l->items);
    *l = (struct release_list){0};
}

void release_note(struct release_list *l, struct cache *cache, const struct admit_decision *d)
{
    if (d->legacy || !declare_release_wanted(cache_gang_get(cache, d->namespace_, d->cluster), d))
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->items = util_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->n++] = (struct release_item){
        .path = util_strdupf("/apis/ray.io/v1/namespaces/%s/rayclusters/%s", d->namespace_, d->cluster),
        .uid = d->cluster_uid != NULL ? util_strdup(d->cluster_uid) : NULL,
    };
}

size_t release_send(struct kube_client *client, struct release_list *l)
{
    size_t n = l->n, released = 0;
    if (n == 0)
        return 0;
    struct kube_batch_item *items = util_calloc(n, sizeof(*items));
    json_t **patches = util_calloc(n, sizeof(*patches));
    for (size_t i = 0; i < n; i++) {
        patches[i] = heldsuspend_release_patch(); /* owned, freed below */
        if (l->items[i].uid != NULL)              /* never release a new RayCluster of the same name */
            json_object_set_new(json_object_get(patches[i], "metadata"), "uid", json_string(l->items[i].uid));
        items[i] = (struct kube_batch_item){.method = "PATCH",
                                            .path = l->items[i].path,
                                            .content_type = kube_patch_content_type(KUBE_PATCH_MERGE),
                                            .body = patches[i],
                                            .status_only = 1};
    }
    kube_batch(client, items, n, 64);
    for (size_t i = 0; i < n; i++) {
        long st = items[i].resp.status;
        if (items[i].rc == 0) {
            released++;
            log_infof("%s: released: its gang must wait, its pods are created gated", l->items[i].path);
        } else if (st != 404 && st != 409) {
            log_warnf("release %s: %s", l->items[i].path, items[i].resp.message);
        }
        kube_client_response_finish(&items[i].resp);
        json_decref(patches[i]);
    }
    free(items);
    free(patches);
    release_list_finish(l);
    return released;
}
