/*
 * eventplan: when a waiting gang's GangWaiting Warning is posted, and as
 * which Event, as a pure function of what the passes reported and the time
 * the caller passes in (CLOCK_MONOTONIC ms; no clock here).
 *
 * - One Event per gang per distinct reason (enum admit_reason): "waiting for
 *   pods: 1 of 3" and "2 of 3" are one reason, the later message wins.
 * - A reason is told only once it has lasted EVENTPLAN_SETTLE_MS since the
 *   pass first reported it: a state that passes within a second (pods a
 *   moment from created, a queue a moment from fitting) makes no Warning,
 *   and a gang admitted meanwhile gets none.
 * - A reason that comes back (A, then B, then A again) is told again by
 *   counting the same Event up, the way Kubernetes' recorder aggregates a
 *   repeated Event (core/v1 count and lastTimestamp, a PATCH of the Event
 *   eventplan_event_name names), not by a new Event.
 *
 * The caller keeps one struct eventplan per gang (and one for its
 * autoscaling tail), zero-initialised, and calls eventplan_note() for every
 * decision of a pass about it, then eventplan_due() when it wants to know
 * what to post.
 */
#ifndef RAYGATE_EVENTPLAN_H
#define RAYGATE_EVENTPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "admitresult.h"

/* How long a wait reason must last before its Warning is posted. */
#define EVENTPLAN_SETTLE_MS 1000

/* More than the last enum admit_reason (a reason beyond is counted as this last slot). */
#define EVENTPLAN_REASONS 16

struct eventplan {
    enum admit_reason reason;          /* the reason waited for now; ADMIT_REASON_NONE: not waiting */
    long long since_ms;                /* when a pass first reported it */
    int told;                          /* its Event was posted (or counted up) for this stretch of waiting */
    uint32_t count[EVENTPLAN_REASONS]; /* how often each reason's Event was posted or counted up */
};

enum eventplan_action {
    EVENTPLAN_NONE = 0, /* nothing to post now */
    EVENTPLAN_POST,     /* the reason's first Event: create it (count 1) */
    EVENTPLAN_COUNT,    /* the reason came back: count its Event up (PATCH count, lastTimestamp, message) */
};

/*
 * A pass reported the gang waiting for reason (ADMIT_REASON_NONE: not
 * waiting any more: admitted, finished) at now_ms. Another reason than the
 * current one starts a new stretch (its settle time begins now); the same
 * reason changes nothing. Returns 1 when a new stretch began.
 */
int eventplan_note(struct eventplan *p, enum admit_reason reason, long long now_ms);

/*
 * What to post at now_ms, with settle_ms (EVENTPLAN_SETTLE_MS in the
 * controller) and, when not NONE, the Event's count in *count; marks the
 * stretch told, so that it is posted once. NONE while not waiting, already
 * told, or not settled yet.
 */
enum eventplan_action eventplan_due(struct eventplan *p, long long now_ms, long long settle_ms, uint32_t *count);

/* When eventplan_due will have something to post (now_ms or later), or -1: never without another note. */
long long eventplan_due_at(const struct eventplan *p, long long settle_ms);

/* The current reason's Event count (0: never posted), for an object told late (a head pod created meanwhile). */
uint32_t eventplan_count(const struct eventplan *p);

/*
 * The name of the aggregated Event about object (its name, uid may be NULL) for
 * reason, into buf (size >= 254): "<object>.gangwaiting-<reason>[-tail]-<uid's
 * first 8>", a valid DNS subdomain of at most 253 bytes (the object's name
 * cut, without a trailing '-' or '.'). tail: the autoscaling tail's. Returns buf.
 */
char *eventplan_event_name(char *buf, size_t size, const char *object, const char *uid, enum admit_reason reason, int tail);

#endif
