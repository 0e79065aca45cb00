#include "dispatched.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "util.h"

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const char *annotation(const json_t *obj, const char *key)
{
    return str(json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
}

/* pg's condition of type Dispatched (borrowed), or NULL. */
static const json_t *dispatched_condition(const json_t *pg)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(pg, "status"), "conditions"), i, c)
    {
        const char *type = str(c, "type");
        if (type != NULL && strcmp(type, "Dispatched") == 0)
            return c;
    }
    return NULL;
}

/* "gpu-east: msg; gpu-west: msg" of reasons (an object of strings), new. */
static char *reasons_text(const json_t *reasons)
{
    struct util_buf b = {0};
    const char *worker;
    const json_t *msg;
    json_object_foreach((json_t *)reasons, worker, msg)
    {
        util_buf_printf(&b, "%s%s: %s", b.len > 0 ? "; " : "", worker, json_is_string(msg) ? json_string_value(msg) : "?");
    }
    return util_buf_take(&b);
}

int dispatched_row(json_t *row, const json_t *owner, const json_t *pg)
{
    const char *to = annotation(owner, NAMES_ANNOTATION_DISPATCHED_TO);
    const char *text = annotation(owner, NAMES_ANNOTATION_DISPATCH_REASONS);
    const json_t *cond = dispatched_condition(pg);
    if ((to == NULL || to[0] == '\0') && text == NULL && cond == NULL)
        return 0;
    json_object_set_new(row, "worker", to != NULL && to[0] != '\0' ? json_string(to) : json_null());
    json_t *reasons = text != NULL ? json_loads(text, 0, NULL) : NULL;
    if (reasons != NULL && !json_is_object(reasons)) {
        json_decref(reasons);
        reasons = NULL;
    }
    const char *at = annotation(owner, NAMES_ANNOTATION_DISPATCHED_AT);
    json_object_set_new(row, "dispatch",
                        json_pack("{s:o,s:o,s:o}", "at", at != NULL ? json_string(at) : json_null(), "reasons",
                                  reasons != NULL ? reasons : json_null(), "message",
                                  str(cond, "message") != NULL ? json_string(str(cond, "message")) : json_null()));
    if (to != NULL && to[0] != '\0') {
        json_object_set_new(row, "state", json_string("Dispatched"));
        /* Its pods are the worker's: none is bound here, and this cluster does not count them. */
        json_t *pods = json_object_get(row, "pods");
        if (json_is_object(pods)) {
            json_object_set_new(pods, "bound", json_null());
            char *where = util_strdupf("on worker %s", to);
            json_object_set_new(pods, "counted", json_string(where));
            free(where);
        }
        char *w = util_strdupf("worker %s", to);
        json_object_set_new(row, "waitingFor", json_string(w));
        free(w);
        return 1;
    }
    char *why = reasons != NULL && json_object_size(reasons) > 0 ? reasons_text(reasons) : NULL;
    char *w = why != NULL ? util_strdupf("no worker fits: %s", why)
                          : util_strdup(str(cond, "message") != NULL ? str(cond, "message") : "no worker chosen yet");
    json_object_set_new(row, "waitingFor", json_string(w));
    free(w);
    free(why);
    return 1;
}

int dispatched_explain(json_t *lines, const json_t *row)
{
    const json_t *d = json_object_get(row, "dispatch");
    if (d == NULL)
        return 0;
    const char *worker = str(row, "worker"), *at = str(d, "at"), *msg = str(d, "message");
    char *line;
    if (worker != NULL) {
        line = util_strdupf("dispatched to worker %s%s%s: its pods run there, not on this manager; `kubectl raygate why` "
                            "on %s says how it fares",
                            worker, at != NULL ? " at " : "", at != NULL ? at : "", worker);
        json_array_append_new(lines, json_string(line));
        free(line);
        if (msg != NULL)
            json_array_append_new(lines, json_string(msg));
        return 1;
    }
    const json_t *reasons = json_object_get(d, "reasons");
    if (json_object_size(reasons) == 0) {
        json_array_append_new(
            lines, json_string(msg != NULL ? msg : "the dispatcher has not weighed it yet (is raygate-dispatch running?)"));
        return 1;
    }
    json_array_append_new(lines, json_string("no worker fits it now; it is dispatched when one has room:"));
    const char *name;
    const json_t *m;
    json_object_foreach((json_t *)reasons, name, m)
    {
        line = util_strdupf("  %s: %s", name, json_is_string(m) ? json_string_value(m) : "?");
        json_array_append_new(lines, json_string(line));
        free(line);
    }
    return 1;
}
