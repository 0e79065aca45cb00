/*
 * queuetree: the tree Volcano Queues make through spec.parent, as a pure
 * function of their names.
 *
 * A queue without a parent (spec.parent unset, empty or "root") is a child of
 * the root, which exists whether or not a Queue is named "root". A Queue named
 * "root" is the root itself: its own spec.parent is ignored and it never holds
 * gangs. Only leaves (queues without children) hold gangs.
 *
 * A queue whose chain of parents does not reach the root is bad:
 * - QUEUETREE_SELF_PARENT: it names itself;
 * - QUEUETREE_CYCLE: it is in a cycle of two or more queues;
 * - QUEUETREE_MISSING_PARENT: its parent is not a (present) queue;
 * - QUEUETREE_BAD_ANCESTOR: an ancestor is bad for one of the reasons above
 *   (or, in the gate's tree, QUEUETREE_BAD_SPEC).
 * The webhook denies a Queue that would make one (webhook/); the gate
 * controller treats the bad ones as Closed, and the rest of the tree goes on.
 *
 * Used by the webhook (validation, leaf check) and by the gate controller's
 * tree (qtree.h). Pure: no I/O.
 */
#ifndef RAYGATE_QUEUETREE_H
#define RAYGATE_QUEUETREE_H

#include <stddef.h>

/* The parent index of the root's children. */
#define QUEUETREE_ROOT ((size_t)-1)

/* The name a queue's parent may give for the root, and the name of a Queue that is the root. */
#define QUEUETREE_ROOT_NAME "root"

/* One queue, as its Queue object gives it (strings borrowed). */
struct queuetree_in {
    const char *name;
    const char *parent; /* spec.parent; NULL, "" or "root": the root */
    int present;        /* the Queue object exists (0: only named, e.g. by a gang): it cannot be a parent */
};

enum queuetree_state {
    QUEUETREE_OK = 0,
    QUEUETREE_SELF_PARENT,
    QUEUETREE_CYCLE,
    QUEUETREE_MISSING_PARENT,
    QUEUETREE_BAD_ANCESTOR,
    QUEUETREE_BAD_SPEC, /* its quantities break a rule of queuespec.h: set by the gate's tree (qtree.h), never by queuetree_build */
};

/* One queue's place in the tree; indexes are those of the input. */
struct queuetree_node {
    size_t parent; /* its parent's index, or QUEUETREE_ROOT (also for the root queue itself and for bad queues
                      whose parent is missing) */
    enum queuetree_state state;
    size_t bad;          /* QUEUETREE_BAD_ANCESTOR: the bad ancestor's index; QUEUETREE_CYCLE, SELF_PARENT: itself */
    size_t depth;        /* 1 for the root's children, 0 for the root queue and for bad queues */
    size_t nchildren;    /* present queues naming it as their parent */
    size_t first_child;  /* index of one child, or QUEUETREE_ROOT when none */
    size_t next_sibling; /* the next child of its parent, or QUEUETREE_ROOT */
    int is_root;         /* the Queue named "root" */
};

/*
 * Builds out[0..n) for in[0..n) (names unique). Children are linked in input
 * order. Returns the number of bad queues. root_first, when not NULL, is set
 * to the first of the root's children (QUEUETREE_ROOT: none).
 */
size_t queuetree_build(const struct queuetree_in *in, size_t n, struct queuetree_node *out, size_t *root_first);

/* The index of the queue named name in in[0..n), or QUEUETREE_ROOT when absent. O(n). */
size_t queuetree_find(const struct queuetree_in *in, size_t n, const char *name);

/* Whether parent (a spec.parent value; may be NULL) names the root. */
int queuetree_parent_is_root(const char *parent);

/* A short English name of state: "ok", "its own parent", "in a cycle", "parent missing", "under a bad ancestor",
 * "against the rules of its spec". */
const char *queuetree_state_text(enum queuetree_state state);

#endif
