#include "eventplan.h"

#include <stdio.h>
#include <string.h>

static size_t slot(enum admit_reason reason)
{
    size_t i = (size_t)reason;
    return i < EVENTPLAN_REASONS ? i : EVENTPLAN_REASONS - 1;
}

int eventplan_note(struct eventplan *p, enum admit_reason reason, long long now_ms)
{
    if (reason == p->reason)
        return 0;
    p->reason = reason;
    p->since_ms = now_ms;
    p->told = 0;
    return reason != ADMIT_REASON_NONE;
}

long long eventplan_due_at(const struct eventplan *p, long long settle_ms)
{
    if (p->reason == ADMIT_REASON_NONE || p->told)
        return -1;
    return p->since_ms + (settle_ms > 0 ? settle_ms : 0);
}

enum eventplan_action eventplan_due(struct eventplan *p, long long now_ms, long long settle_ms, uint32_t *count)
{
    long long at = eventplan_due_at(p, settle_ms);
    if (at < 0 || now_ms < at)
        return EVENTPLAN_NONE;
    p->told = 1;
    uint32_t *c = &p->count[slot(p->reason)];
    if (*c < UINT32_MAX)
        (*c)++;
    *count = *c;
    return *c == 1 ? EVENTPLAN_POST : EVENTPLAN_COUNT;
}

uint32_t eventplan_count(const struct eventplan *p)
{
    return p->reason == ADMIT_REASON_NONE ? 0 : p->count[slot(p->reason)];
}

char *eventplan_event_name(char *buf, size_t size, const char *object, const char *uid, enum admit_reason reason, int tail)
{
    char suffix[96];
    snprintf(suffix, sizeof(suffix), ".gangwaiting-%s%s%s%.8s", admit_result_reason_name(reason), tail ? "-tail" : "",
             uid != NULL && uid[0] != '\0' ? "-" : "", uid != NULL ? uid : "");
    size_t keep = strlen(object), room = 253 - strlen(suffix);
    if (keep > room)
        keep = room;
    while (keep > 0 && (object[keep - 1] == '-' || object[keep - 1] == '.'))
        keep--;
    snprintf(buf, size, "%.*s%s", (int)keep, object, suffix);
    return buf;
}
