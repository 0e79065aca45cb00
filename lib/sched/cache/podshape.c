/* podshape: what the gate controller builds of a pod watch event (podshape.h). */
#include "podshape.h"

enum { SHAPE_EVENT = PODSHAPE_EVENT, SHAPE_POD, SHAPE_META, SHAPE_SPEC, SHAPE_CONTAINERS, SHAPE_CONTAINER, SHAPE_STATUS };

static int key_is(const struct jsonscan *s, long key, const char *name)
{
    return jsonscan_string_is(s, key, name);
}

/* A member of a container (or init container): only what requests and restart policy are read from. */
static int container_member(const struct jsonscan *s, long key)
{
    return key_is(s, key, "name") || key_is(s, key, "resources") || key_is(s, key, "restartPolicy") ? JSONSCAN_WHOLE
                                                                                                    : JSONSCAN_DROP;
}

int podshape_fn(int shape, const struct jsonscan *s, long key)
{
    int element = key < 0;
    if (element != (shape == SHAPE_CONTAINERS))
        return JSONSCAN_WHOLE; /* an array where an object is expected, or the other way round: built whole */
    switch (shape) {
    case SHAPE_EVENT:
        return key_is(s, key, "object") ? SHAPE_POD : JSONSCAN_WHOLE;
    case SHAPE_POD:
        return key_is(s, key, "metadata") ? SHAPE_META
               : key_is(s, key, "spec")   ? SHAPE_SPEC
               : key_is(s, key, "status") ? SHAPE_STATUS
                                          : JSONSCAN_WHOLE;
    case SHAPE_META:
        return key_is(s, key, "managedFields") ? JSONSCAN_DROP : JSONSCAN_WHOLE;
    case SHAPE_SPEC:
        return key_is(s, key, "containers") || key_is(s, key, "initContainers") ? SHAPE_CONTAINERS
               : key_is(s, key, "volumes")                                      ? JSONSCAN_DROP
                                                                                : JSONSCAN_WHOLE;
    case SHAPE_CONTAINERS:
        return SHAPE_CONTAINER;
    case SHAPE_CONTAINER:
        return container_member(s, key);
    default: /* SHAPE_STATUS */
        return key_is(s, key, "containerStatuses") || key_is(s, key, "initContainerStatuses") ||
                       key_is(s, key, "ephemeralContainerStatuses")
                   ? JSONSCAN_DROP
                   : JSONSCAN_WHOLE;
    }
}
