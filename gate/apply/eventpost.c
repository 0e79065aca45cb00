#include "eventpost.h"

#include <stdio.h>
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
        json_decref(l->items[i].patch);
        free(l->items[i].ns);
        free(l->items[i].name);
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
    l->items[l->len] = (struct eventpost_item){.ns = util_strdup(ns), .event = event};
    l->len++;
}

void eventpost_add(struct eventpost_list *l, const struct events_object *obj, const char *type, const char *reason,
                   const char *message, const char *now, const char *instance)
{
    eventpost_add_new(l, obj->namespace_, events_build(obj, type, reason, message, now, instance));
}

void eventpost_add_counted(struct eventpost_list *l, const struct events_object *obj, const char *name, const char *type,
                           const char *reason, const char *message, const char *now, const char *instance, long long count)
{
    eventpost_add_new(l, obj->namespace_, events_build_named(obj, name, type, reason, message, now, instance, count));
    struct eventpost_item *it = &l->items[l->len - 1];
    it->name = util_strdup(name);
    it->patch = events_count_patch(message, now, count);
    it->patch_first = count > 1;
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

/* One request of it: the Event created, or (patch) an aggregated one counted up. path is filled (owned by the caller). */
static struct kube_batch_item request(const struct eventpost_item *it, int patch, char **path)
{
    if (patch) {
        *path = util_strdupf("/api/v1/namespaces/%s/events/%s", it->ns, it->name);
        return (struct kube_batch_item){
            .method = "PATCH", .path = *path, .content_type = kube_patch_content_type(KUBE_PATCH_MERGE), .body = it->patch};
    }
    *path = util_strdupf("/api/v1/namespaces/%s/events", it->ns);
    return (struct kube_batch_item){.method = "POST", .path = *path, .body = it->event};
}

/*
 * Sends the n requests of items (patch[i]: item i's PATCH, else its POST), 32
 * at a time; sets again[i] when an aggregated Event's request must go the
 * other way (a POST found it existing, a PATCH found it gone). Returns how
 * many failed otherwise, the first failure's message into msg.
 */
static size_t send_round(struct kube_client *k, struct eventpost_list *l, const int *patch, const int *skip, int *again, char *msg,
                         size_t msgsize)
{
    size_t n = l->len, failed = 0;
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    char **paths = util_calloc(n + 1, sizeof(*paths));
    size_t *of = util_calloc(n + 1, sizeof(*of)), m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!skip[i]) {
            of[m] = i;
            items[m] = request(&l->items[i], patch[i], &paths[m]);
            m++;
        }
    }
    kube_batch(k, items, m, 32);
    for (size_t j = 0; j < m; j++) {
        size_t i = of[j];
        long st = items[j].resp.status;
        again[i] = items[j].rc != 0 && l->items[i].name != NULL && (patch[i] ? st == 404 : st == 409);
        /* An Event in a namespace being deleted has nobody to tell. */
        if (items[j].rc != 0 && !again[i] && !(st == 403 && eventpost_namespace_terminating(items[j].resp.body)) && failed++ == 0)
            snprintf(msg, msgsize, "%s", items[j].resp.message);
        kube_client_response_finish(&items[j].resp);
        free(paths[j]);
    }
    free(items);
    free(paths);
    free(of);
    return failed;
}

size_t eventpost_send(struct kube_client *k, struct eventpost_list *l, eventpost_may_write_fn may_write, void *arg,
                      const char *what)
{
    size_t n = l->len;
    if (n == 0 || (may_write != NULL && !may_write(arg))) {
        list_clear(l); /* the Events are ours to drop: the caller only frees the list */
        return 0;
    }
    int *patch = util_calloc(n, sizeof(int)), *skip = util_calloc(n, sizeof(int)), *again = util_calloc(n, sizeof(int));
    char msg[256] = "", msg2[256] = "";
    for (size_t i = 0; i < n; i++)
        patch[i] = l->items[i].patch_first;
    size_t failed = send_round(k, l, patch, skip, again, msg, sizeof(msg));
    size_t nagain = 0;
    for (size_t i = 0; i < n; i++) {
        skip[i] = !again[i];
        patch[i] = !patch[i];
        nagain += (size_t)again[i];
    }
    if (nagain > 0) /* an aggregated Event the other way: created when gone, counted up when it exists */
        failed += send_round(k, l, patch, skip, again, msg2, sizeof(msg2));
    if (failed > 0)
        log_warnf("%zu of %zu %s not recorded (first: %s)", failed, n, what, msg[0] != '\0' ? msg : msg2);
    free(patch);
    free(skip);
    free(again);
    list_clear(l);
    return failed;
}
