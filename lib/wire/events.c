#include "events.h"

#include <string.h>
#include <time.h>

/* The apiserver rejects Events whose message exceeds 1024 bytes (validation). */
#define EVENTS_MESSAGE_MAX 1024

char *events_timestamp(long long unix_seconds, char *buf, size_t size)
{
    time_t t = (time_t)unix_seconds;
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && size > 0)
        buf[0] = '\0';
    return buf;
}

static json_t *cut_message(const char *message)
{
    size_t n = strlen(message);
    if (n <= EVENTS_MESSAGE_MAX)
        return json_string(message);
    size_t keep = EVENTS_MESSAGE_MAX - 3;
    while (keep > 0 && ((unsigned char)message[keep] & 0xC0) == 0x80)
        keep--;
    char buf[EVENTS_MESSAGE_MAX + 1];
    memcpy(buf, message, keep);
    memcpy(buf + keep, "...", 4);
    return json_string(buf);
}

json_t *events_build(const struct events_object *obj, const char *type, const char *reason, const char *message, const char *now,
                     const char *instance)
{
    char gen[300];
    snprintf(gen, sizeof(gen), "%.250s.", obj->name);
    json_t *involved = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", obj->api_version, "kind", obj->kind, "namespace",
                                 obj->namespace_, "name", obj->name);
    if (obj->uid != NULL && obj->uid[0] != '\0')
        json_object_set_new(involved, "uid", json_string(obj->uid));
    json_t *ev =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:o, s:s, s:{s:s}, s:s, s:s, s:i, s:s, s:s}", "apiVersion", "v1", "kind",
                  "Event", "metadata", "generateName", gen, "namespace", obj->namespace_, "involvedObject", involved, "reason",
                  reason, "message", cut_message(message), "type", type, "source", "component", EVENTS_COMPONENT, "firstTimestamp",
                  now, "lastTimestamp", now, "count", 1, "reportingComponent", EVENTS_COMPONENT, "reportingInstance", instance);
    return ev;
}

json_t *events_build_named(const struct events_object *obj, const char *name, const char *type, const char *reason,
                           const char *message, const char *now, const char *instance, long long count)
{
    json_t *ev = events_build(obj, type, reason, message, now, instance);
    json_t *meta = json_object_get(ev, "metadata");
    json_object_del(meta, "generateName");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(ev, "count", json_integer(count));
    return ev;
}

json_t *events_count_patch(const char *message, const char *now, long long count)
{
    return json_pack("{s:I, s:s, s:o}", "count", (json_int_t)count, "lastTimestamp", now, "message", cut_message(message));
}
