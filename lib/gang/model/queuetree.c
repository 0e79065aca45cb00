/* queuetree: the tree Volcano Queues make through spec.parent (queuetree.h). */
#include "queuetree.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int queuetree_parent_is_root(const char *parent)
{
    return parent == NULL || parent[0] == '\0' || strcmp(parent, QUEUETREE_ROOT_NAME) == 0;
}

size_t queuetree_find(const struct queuetree_in *in, size_t n, const char *name)
{
    for (size_t i = 0; name != NULL && i < n; i++) {
        if (in[i].name != NULL && strcmp(in[i].name, name) == 0)
            return i;
    }
    return QUEUETREE_ROOT;
}

const char *queuetree_state_text(enum queuetree_state state)
{
    switch (state) {
    case QUEUETREE_OK:
        return "ok";
    case QUEUETREE_SELF_PARENT:
        return "its own parent";
    case QUEUETREE_CYCLE:
        return "in a cycle";
    case QUEUETREE_MISSING_PARENT:
        return "parent missing";
    case QUEUETREE_BAD_ANCESTOR:
        return "under a bad ancestor";
    case QUEUETREE_BAD_SPEC:
        return "against the rules of its spec";
    }
    return "unknown";
}

/* The inputs sorted by name, for finding parents. */
struct named {
    const char *name;
    size_t idx;
};

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static size_t named_find(const struct named *v, size_t n, const char *name)
{
    struct named key = {name, 0};
    const struct named *hit = bsearch(&key, v, n, sizeof(*v), cmp_named);
    return hit != NULL ? hit->idx : QUEUETREE_ROOT;
}

/* The parent links alone: out[i].parent, and MISSING_PARENT / SELF_PARENT. */
static void link_parents(const struct queuetree_in *in, size_t n, struct queuetree_node *out)
{
    struct named *v = util_calloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = (struct named){in[i].name, i};
    qsort(v, n, sizeof(*v), cmp_named);
    for (size_t i = 0; i < n; i++) {
        struct queuetree_node *o = &out[i];
        memset(o, 0, sizeof(*o));
        o->parent = o->first_child = o->next_sibling = o->bad = QUEUETREE_ROOT;
        o->is_root = strcmp(in[i].name, QUEUETREE_ROOT_NAME) == 0;
        if (o->is_root || queuetree_parent_is_root(in[i].parent))
            continue;
        size_t p = named_find(v, n, in[i].parent);
        if (p == i) {
            o->state = QUEUETREE_SELF_PARENT;
            o->bad = i;
        } else if (p == QUEUETREE_ROOT || !in[p].present) {
            o->state = QUEUETREE_MISSING_PARENT;
            o->bad = i;
        } else {
            o->parent = p;
        }
    }
    free(v);
}

enum { WALK_NEW = 0, WALK_ON_PATH, WALK_DONE };

/*
 * Follows i's parents until the root, a queue already settled, or one on the
 * current path (a cycle); then settles every queue of the path: the cycle's
 * members CYCLE, the others OK with their depth or BAD_ANCESTOR.
 */
static void settle(struct queuetree_node *out, unsigned char *mark, size_t *path, size_t i)
{
    size_t len = 0, at = i;
    while (at != QUEUETREE_ROOT && mark[at] == WALK_NEW && out[at].state == QUEUETREE_OK) {
        mark[at] = WALK_ON_PATH;
        path[len++] = at;
        at = out[at].parent;
    }
    size_t end = len; /* path[0..end) gets its state from at */
    if (at != QUEUETREE_ROOT && mark[at] == WALK_ON_PATH) {
        size_t k = len;
        while (k > 0 && path[k - 1] != at)
            k--;
        for (size_t j = k - 1; j < len; j++) {
            out[path[j]].state = QUEUETREE_CYCLE;
            out[path[j]].bad = path[j];
            mark[path[j]] = WALK_DONE;
        }
        end = k - 1;
    }
    for (size_t j = end; j-- > 0;) {
        struct queuetree_node *o = &out[path[j]];
        size_t p = o->parent;
        if (p == QUEUETREE_ROOT) {
            o->depth = 1;
        } else if (out[p].state != QUEUETREE_OK) {
            o->state = QUEUETREE_BAD_ANCESTOR;
            o->bad = out[p].state == QUEUETREE_BAD_ANCESTOR ? out[p].bad : p;
        } else {
            o->depth = out[p].depth + 1;
        }
        mark[path[j]] = WALK_DONE;
    }
}

size_t queuetree_build(const struct queuetree_in *in, size_t n, struct queuetree_node *out, size_t *root_first)
{
    link_parents(in, n, out);
    unsigned char *mark = util_calloc(n + 1, 1);
    size_t *path = util_calloc(n + 1, sizeof(*path));
    for (size_t i = 0; i < n; i++) {
        if (out[i].is_root)
            mark[i] = WALK_DONE;
    }
    for (size_t i = 0; i < n; i++) {
        if (mark[i] == WALK_NEW)
            settle(out, mark, path, i);
    }
    free(mark);
    free(path);
    size_t first = QUEUETREE_ROOT, bad = 0;
    for (size_t i = n; i-- > 0;) { /* backwards, so that children link in input order */
        if (out[i].state != QUEUETREE_OK) {
            bad++;
            if (out[i].state != QUEUETREE_CYCLE && out[i].state != QUEUETREE_BAD_ANCESTOR)
                continue;
        }
        if (out[i].is_root || !in[i].present)
            continue;
        size_t p = out[i].parent;
        size_t *head = p == QUEUETREE_ROOT ? &first : &out[p].first_child;
        if (out[i].state == QUEUETREE_OK || p != QUEUETREE_ROOT) {
            out[i].next_sibling = *head;
            *head = i;
            if (p != QUEUETREE_ROOT)
                out[p].nchildren++;
        }
    }
    if (root_first != NULL)
        *root_first = first;
    return bad;
}
