#include "eventpost.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

void eventpost_list_init(struct eventpost_list *l)
{
    *l = (struct eventpost_list){0};
}

/* Frees the Events, keeps the storage. */
static void list_clear(struct eventpost_list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        json_decref(l->items[i].event);
        free(l->items[i].ns);
    }
    l->len = 0;
}

void eventpost_list_finish(struct eventpost_list *l)
{
    list_clear(l);
    free(l->items);
    *l = (struct eventpost_list){0};
}

void eventpost_add_new(struct eventpost_list *l, const char *ns, json_t *event)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = util_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->len].ns = util_strdup(ns);
    l->items[l->len].event = event;
    l->len++;
}

void eventpost_add(struct eventpost_list *l, const struct events_object *obj, const char *type, const char *reason,
                   const char *message, const char *now, const char *instance)
{
    eventpost_add_new(l, obj->namespace_, events_build(obj, type, reason, message, now, instance));
}

int eventpost_namespace_terminating(const json_t *status)
{
    size_t i;
    const json_t *cause;
    json_array_foreach(json_object_get(json_object_get(status, "details"), "causes"), i, cause)
    {
        const char *type = json_string_value(json_object_get(cause, "reason")); /* StatusCause.Type */
        if (type != NULL && strcmp(type, "NamespaceTerminating") == 0)
            return 1;
    }
    return 0;
}

size_t eventpost_send(struct kube_client *k, struct eventpost_list *l, eventpost_may_write_fn may_write, void *arg,
                      const char *what)
{
    size_t n = l->len, failed = 0, first = 0;
    if (n == 0 || (may_write != NULL && !may_write(arg))) {
        list_clear(l); /* the Events are ours to drop: the caller only frees the list */
        return 0;
    }
    struct kube_batch_item *items = util_calloc(n, sizeof(*items));
    char **paths = util_calloc(n, sizeof(*paths));
    for (size_t i = 0; i < n; i++) {
        paths[i] = util_strdupf("/api/v1/namespaces/%s/events", l->items[i].ns);
        items[i] = (struct kube_batch_item){.method = "POST", .path = paths[i], .body = l->items[i].event};
    }
    kube_batch(k, items, n, 32);
    for (size_t i = 0; i < n; i++) {
        /* An Event in a namespace being deleted has nobody to tell. */
        if (items[i].rc != 0 && !(items[i].resp.status == 403 && eventpost_namespace_terminating(items[i].resp.body)) &&
            failed++ == 0)
            first = i;
    }
    if (failed > 0)
        log_warnf("%zu of %zu %s not recorded (first: %s)", failed, n, what, items[first].resp.message);
    for (size_t i = 0; i < n; i++) {
        kube_response_finish(&items[i].resp);
        free(paths[i]);
    }
    free(items);
    free(paths);
    list_clear(l);
    return failed;
}
