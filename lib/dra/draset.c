#include "draset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draset_internal.h"
#include "util.h"

static const char *const kind_names[DRASET_KINDS] = {
    [DRASET_CLASS] = "deviceclass",
    [DRASET_SLICE] = "resourceslice",
    [DRASET_CLAIM] = "resourceclaim",
    [DRASET_TEMPLATE] = "resourceclaimtemplate",
};

static uint64_t object_hash(int kind, const char *ns, const char *name)
{
    uint64_t h = table_hash_bytes(TABLE_HASH_SEED, &(uint8_t){(uint8_t)kind}, 1);
    return table_hash_str(table_hash_str(h, ns), name);
}

struct draset *draset_create(void)
{
    struct draset *s = util_calloc(1, sizeof(*s));
    table_init(&s->objects);
    table_init(&s->devices);
    table_init(&s->nodes);
    return s;
}

static void free_alloc(struct draset_object *o)
{
    for (size_t i = 0; i < o->nalloc; i++)
        free(o->alloc[i]);
    free(o->alloc);
    o->alloc = NULL;
    o->nalloc = 0;
    o->allocated = 0;
}

/* Empties what o's object held (parsed parts, error), keeping its key. */
static void object_clear(struct draset_object *o)
{
    deviceclass_finish(&o->cls);
    resourceslice_finish(&o->slice);
    claimspec_finish(&o->spec);
    free(o->counts.total);
    free(o->counts.held);
    memset(&o->counts, 0, sizeof(o->counts));
    free_alloc(o);
    free(o->error);
    o->error = NULL;
    o->valid = 0;
}

static void object_free(struct draset_object *o)
{
    object_clear(o);
    free(o->ns);
    free(o->name);
    free(o);
}

void draset_destroy(struct draset *s)
{
    if (s == NULL)
        return;
    draset_ledger_clear(s);
    struct table_node *n, *next;
    for (n = table_next(&s->objects, NULL); n != NULL; n = next) {
        next = table_next(&s->objects, n);
        table_remove(&s->objects, n);
        object_free(TABLE_CONTAINER_OF(n, struct draset_object, by_key));
    }
    table_finish(&s->objects);
    dravariant_clear(&s->variants);
    table_finish(&s->devices);
    table_finish(&s->nodes);
    for (size_t i = 0; i < s->nresources; i++)
        free(s->resources[i]);
    free(s->resources);
    free(s->journal);
    free(s->inexact);
    free(s);
}

struct draset_object *draset_find(const struct draset *s, int kind, const char *ns, const char *name)
{
    uint64_t h = object_hash(kind, ns, name);
    for (struct table_node *n = table_first(&s->objects, h); n != NULL; n = n->next) {
        struct draset_object *o = TABLE_CONTAINER_OF(n, struct draset_object, by_key);
        if (n->hash == h && o->kind == kind && strcmp(o->ns, ns) == 0 && strcmp(o->name, name) == 0)
            return o;
    }
    return NULL;
}

char *draset_device_key(const char *driver, const char *pool, const char *device)
{
    return util_strdupf("%s\x1f%s\x1f%s", driver != NULL ? driver : "", pool != NULL ? pool : "", device != NULL ? device : "");
}

int draset_resource_index(const struct draset *s, const char *name)
{
    for (size_t i = 0; i < s->nresources; i++) {
        if (strcmp(s->resources[i], name) == 0)
            return (int)i;
    }
    return -1;
}

size_t draset_resources(const struct draset *s, const char *const **names)
{
    *names = (const char *const *)s->resources;
    return s->nresources;
}

/* The number of resource name, added when new; -1 past DRASET_MAX_RESOURCES. */
static int resource_number(struct draset *s, const char *name)
{
    int r = draset_resource_index(s, name);
    if (r >= 0 || s->nresources >= DRASET_MAX_RESOURCES)
        return r;
    s->resources = util_realloc(s->resources, (s->nresources + 1) * sizeof(*s->resources));
    s->resources[s->nresources] = util_strdup(name);
    return (int)s->nresources++;
}

/* status.allocation.devices.results[] of a claim (obj borrowed) into o's keys. */
static void claim_allocation(struct draset_object *o, const json_t *obj)
{
    const json_t *alloc = json_object_get(json_object_get(obj, "status"), "allocation");
    if (!json_is_object(alloc))
        return;
    o->allocated = 1;
    const json_t *results = json_object_get(json_object_get(alloc, "devices"), "results");
    size_t n = json_array_size(results);
    o->alloc = util_calloc(n > 0 ? n : 1, sizeof(*o->alloc));
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(results, i);
        o->alloc[o->nalloc++] =
            draset_device_key(json_string_value(json_object_get(r, "driver")), json_string_value(json_object_get(r, "pool")),
                              json_string_value(json_object_get(r, "device")));
    }
}

/* Adds request r's variant (dravariant.h) when it has selectors of its own and is new: the ledger is then built again. */
static void variant_add(struct draset *s, const struct claimspec_request *r)
{
    if (r->nsel == 0 || r->device_class == NULL || dravariant_find(&s->variants, r) >= 0)
        return;
    char *name = dravariant_name(r);
    int n = resource_number(s, name);
    free(name);
    if (n < 0)
        return; /* past DRASET_MAX_RESOURCES: the fit counts the class's devices */
    dravariant_add(&s->variants, r, n);
    s->ledger_stale = 1; /* the devices' resource bits and the counts' widths change */
}

/* Parses obj (borrowed) into o by its kind; 0 or -1 with err. */
static int object_parse(struct draset *s, struct draset_object *o, const json_t *obj, struct error *err)
{
    switch (o->kind) {
    case DRASET_CLASS:
        if (deviceclass_parse(obj, &o->cls, err) != 0)
            return -1;
        o->resource = resource_number(s, o->cls.resource);
        if (o->resource < 0) {
            error_setf(err, "more than %d device resources: %s not counted", DRASET_MAX_RESOURCES, o->cls.resource);
            return -1;
        }
        return 0;
    case DRASET_SLICE:
        return resourceslice_parse(obj, &o->slice, err);
    case DRASET_CLAIM:
        claim_allocation(o, obj);
        return claimspec_parse(json_object_get(obj, "spec"), "spec", &o->spec, err);
    default:
        return claimspec_parse(json_object_get(json_object_get(obj, "spec"), "spec"), "spec.spec", &o->spec, err);
    }
}

/*
 * What an event of kind's object changes. A claim kube-controller-manager made from a pod's template (generated:
 * annotation resource.kubernetes.io/pod-claim-name, as last seen for a deletion) counts as its template does: its
 * allocation moves the nodes' devices, never what pods count as (a flood of such pods must not price every pod again).
 */
static unsigned changed_bits(int kind, int generated)
{
    switch (kind) {
    case DRASET_CLASS:
        return DRASET_CHANGED_DEMAND | DRASET_CHANGED_NODES;
    case DRASET_SLICE:
        return DRASET_CHANGED_NODES;
    case DRASET_CLAIM:
        if (generated)
            return DRASET_CHANGED_NODES;
        return DRASET_CHANGED_DEMAND | DRASET_CHANGED_NODES;
    default:
        return DRASET_CHANGED_DEMAND;
    }
}

/* The claim's allocation before the event, taken from o (the caller frees it). */
static char **take_alloc(struct draset_object *o, size_t *n)
{
    char **keys = o->alloc;
    *n = o->nalloc;
    o->alloc = NULL;
    o->nalloc = 0;
    return keys;
}

static void free_keys(char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
}

/* The journal holds at most this many moves; beyond, the ledger is built again (cheaper than replaying them). */
#define JOURNAL_MAX 65536

static void journal_add(struct draset *s, char *const *keys, size_t n, int sign)
{
    for (size_t i = 0; i < n && !s->ledger_stale; i++) {
        if (s->njournal == JOURNAL_MAX) {
            s->ledger_stale = 1;
            return;
        }
        if (s->njournal == s->capjournal) {
            s->capjournal = s->capjournal ? 2 * s->capjournal : 64;
            s->journal = util_realloc(s->journal, s->capjournal * sizeof(*s->journal));
        }
        s->journal[s->njournal++] = (struct draset_move){util_strdup(keys[i]), sign};
    }
}

/* A claim's allocation moved from old (nold keys, borrowed) to o's (NULL: deleted): journaled unless a rebuild is due. */
static void journal_claim(struct draset *s, char *const *old, size_t nold, const struct draset_object *o)
{
    journal_add(s, old, nold, -1);
    if (o != NULL)
        journal_add(s, o->alloc, o->nalloc, 1);
}

void draset_ledger_clear(struct draset *s)
{
    /* Each next taken before its node goes: table_next(t, NULL) scans from the first bucket, quadratic when emptying. */
    struct table_node *n, *next;
    for (n = table_next(&s->devices, NULL); n != NULL; n = next) {
        next = table_next(&s->devices, n);
        table_remove(&s->devices, n);
        struct draset_device *d = TABLE_CONTAINER_OF(n, struct draset_device, by_key);
        free(d->key);
        free(d);
    }
    for (n = table_next(&s->nodes, NULL); n != NULL; n = next) {
        next = table_next(&s->nodes, n);
        table_remove(&s->nodes, n);
        struct draset_node *nd = TABLE_CONTAINER_OF(n, struct draset_node, by_name);
        free(nd->counts.total);
        free(nd->counts.held);
        free(nd->name);
        free(nd);
    }
    free(s->shared);
    s->shared = NULL;
    s->nshared = 0;
    for (size_t i = 0; i < s->njournal; i++)
        free(s->journal[i].key);
    s->njournal = 0;
}

static struct draset_object *object_get(struct draset *s, int kind, const char *ns, const char *name)
{
    struct draset_object *o = draset_find(s, kind, ns, name);
    if (o != NULL)
        return o;
    o = util_calloc(1, sizeof(*o));
    o->kind = (uint8_t)kind;
    o->ns = util_strdup(ns);
    o->name = util_strdup(name);
    o->by_key.hash = object_hash(kind, ns, name);
    table_insert(&s->objects, &o->by_key);
    return o;
}

unsigned draset_record(struct draset *s, enum draset_kind kind, int deleted, const json_t *obj, struct error *err)
{
    err->message[0] = '\0';
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (name == NULL || (unsigned)kind >= DRASET_KINDS) {
        error_setf(err, "%s without metadata.name", (unsigned)kind < DRASET_KINDS ? kind_names[kind] : "object");
        return 0;
    }
    if (kind == DRASET_CLASS || kind == DRASET_SLICE || ns == NULL)
        ns = "";
    struct draset_object *o = deleted ? draset_find(s, kind, ns, name) : object_get(s, kind, ns, name);
    if (o == NULL)
        return 0;
    const json_t *annotations = json_object_get(meta, "annotations");
    int generated = deleted ? o->generated : json_object_get(annotations, DRASET_POD_CLAIM_ANNOTATION) != NULL;
    o->generated = (uint8_t)generated;
    size_t nold = 0;
    char **old = take_alloc(o, &nold);
    object_clear(o);
    if (deleted) {
        table_remove(&s->objects, &o->by_key);
    } else if (object_parse(s, o, obj, err) != 0) {
        object_clear(o);
        o->error = util_strdupf("%s %s%s%s: %s", kind_names[kind], ns, ns[0] != '\0' ? "/" : "", name, err->message);
        if (kind == DRASET_CLAIM)
            claim_allocation(o, obj); /* its devices are held whatever its spec */
        util_format(err->message, sizeof(err->message), "%s", o->error);
    } else {
        o->valid = 1;
        for (size_t i = 0; (kind == DRASET_CLAIM || kind == DRASET_TEMPLATE) && i < o->spec.nrequests; i++)
            variant_add(s, &o->spec.requests[i]);
    }
    unsigned bits = changed_bits(kind, generated);
    if (kind == DRASET_CLAIM)
        journal_claim(s, old, nold, deleted ? NULL : o);
    else if (bits & DRASET_CHANGED_NODES)
        s->ledger_stale = 1;
    free_keys(old, nold);
    if (deleted)
        object_free(o);
    if (bits & DRASET_CHANGED_DEMAND)
        s->demand_gen++;
    return bits;
}

uint64_t draset_demand_generation(const struct draset *s)
{
    return s->demand_gen;
}

int draset_claim_allocated(const struct draset *s, const char *ns, const char *name)
{
    const struct draset_object *o = draset_find(s, DRASET_CLAIM, ns, name);
    return o == NULL ? -1 : o->allocated;
}

/* Adds count devices of resource name into out; -1 with err on overflow. */
static int add_devices(struct resources *out, const char *name, int64_t count, struct error *err)
{
    const struct quantity *have = resources_get(out, name);
    struct quantity q = {.value = count, .format = QUANTITY_DECIMAL_SI};
    if (have != NULL && quantity_add(&q, have) != 0) {
        error_setf(err, "%s: the devices of the pod's claims overflow", name);
        return -1;
    }
    resources_set(out, name, &q);
    return 0;
}

/* The demand of a parsed claim spec (o: its claim or template) into out; 0, 1 (why) or -1 (why). */
static int spec_demand(const struct draset *s, const struct draset_object *o, struct resources *out, struct error *why)
{
    const char *what = kind_names[o->kind];
    for (size_t i = 0; i < o->spec.nrequests; i++) {
        const struct claimspec_request *r = &o->spec.requests[i];
        if (r->flags & CLAIMSPEC_ALL) {
            error_setf(why, "%s %s/%s: %s.allocationMode: All cannot be counted before allocation", what, o->ns, o->name, r->path);
            return 1;
        }
        const struct draset_object *c = draset_find(s, DRASET_CLASS, "", r->device_class);
        if (c == NULL) {
            error_setf(why, "deviceclass %s (%s.deviceClassName of %s %s/%s) not found", r->device_class, r->path, what, o->ns,
                       o->name);
            return 1;
        }
        if (!c->valid) {
            error_setf(why, "%s", c->error);
            return 1;
        }
        if (add_devices(out, s->resources[c->resource], r->count, why) != 0)
            return -1;
    }
    return 0;
}

/* The variants' devices of a parsed claim spec (o) into out (draset_template_fit); 0 or -1 (why). */
static int spec_fit(const struct draset *s, const struct draset_object *o, struct resources *out, struct error *why)
{
    for (size_t i = 0; i < o->spec.nrequests; i++) {
        const struct claimspec_request *r = &o->spec.requests[i];
        int v = (r->flags & CLAIMSPEC_ALL) ? -1 : dravariant_find(&s->variants, r);
        if (v >= 0 && add_devices(out, s->resources[v], r->count, why) != 0)
            return -1;
    }
    return 0;
}

static int demand(const struct draset *s, int kind, const char *ns, const char *name, int fit, struct resources *out,
                  struct error *why)
{
    const struct draset_object *o = draset_find(s, kind, ns, name);
    if (o == NULL) {
        error_setf(why, "%s %s not found in %s", kind_names[kind], name, ns);
        return 1;
    }
    if (!o->valid) {
        error_setf(why, "%s", o->error != NULL ? o->error : "");
        return 1;
    }
    return fit ? spec_fit(s, o, out, why) : spec_demand(s, o, out, why);
}

int draset_template_demand(const struct draset *s, const char *ns, const char *tmpl, struct resources *out, struct error *why)
{
    return demand(s, DRASET_TEMPLATE, ns, tmpl, 0, out, why);
}

int draset_claim_demand(const struct draset *s, const char *ns, const char *claim, struct resources *out, struct error *why)
{
    return demand(s, DRASET_CLAIM, ns, claim, 0, out, why);
}

int draset_template_fit(const struct draset *s, const char *ns, const char *tmpl, struct resources *out, struct error *why)
{
    int rc = demand(s, DRASET_TEMPLATE, ns, tmpl, 1, out, why);
    return rc == 1 ? 0 : rc; /* what cannot be counted makes the pod wait through draset_template_demand */
}

int draset_claim_fit(const struct draset *s, const char *ns, const char *claim, struct resources *out, struct error *why)
{
    int rc = demand(s, DRASET_CLAIM, ns, claim, 1, out, why);
    return rc == 1 ? 0 : rc;
}

const char *draset_inexact(const struct draset *s)
{
    return s->inexact;
}
