#include "topoconfine.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define HOSTNAME_LABEL "kubernetes.io/hostname"
#define REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"

static int streq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* What kube-scheduler matches a node's hostname requirement against: its kubernetes.io/hostname label, else its name. */
static const char *node_hostname(const struct cache_node *n)
{
    for (uint32_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, HOSTNAME_LABEL) == 0)
            return n->labels[i].value;
    }
    return n->name;
}

/* {"key": "kubernetes.io/hostname", "operator": "In", "values": [the hostnames of d's nodes]} (new). */
static json_t *hostname_requirement(const struct topo_domain *d, const struct fit *f)
{
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(f, &nodes);
    json_t *values = json_array();
    for (size_t i = 0; i < d->nn; i++) {
        if (d->nodes[i] < nn)
            json_array_append_new(values, json_string(node_hostname(nodes[d->nodes[i]])));
    }
    return json_pack("{s:s,s:s,s:o}", "key", HOSTNAME_LABEL, "operator", "In", "values", values);
}

/*
 * The pod's required node selector terms, exactly as the apiserver gave them
 * (new; NULL: none). A gated pod's terms may only gain requirements at their
 * ends (KEP-3838): the apiserver compares the old ones one by one, values in
 * order, so they are taken from the canonical text the pod's class was
 * interned by (shape.c keeps the array whole there; its parsed requirements
 * drop what the scheduler ignores).
 */
static json_t *pod_terms(const struct cache_pod *pod)
{
    if (pod->sched == NULL || pod->sched->nterms == 0)
        return NULL;
    json_t *key = json_loads(pod->sched->key, 0, NULL);
    json_t *terms = json_incref(json_object_get(key, "a"));
    json_decref(key);
    if (!json_is_array(terms))
        abort(); /* shape.c wrote the text with the terms under "a" */
    return terms;
}

/* {"affinity": {"nodeAffinity": {required: {"nodeSelectorTerms": [...]}}}}: the pod's terms each with req appended (steals req). */
static json_t *affinity_new(const struct cache_pod *pod, json_t *req)
{
    json_t *terms = pod_terms(pod);
    if (terms == NULL) {
        terms = json_pack("[{s:[o]}]", "matchExpressions", req);
    } else {
        size_t i;
        json_t *t;
        json_array_foreach(terms, i, t)
        {
            json_t *exprs = json_object_get(t, "matchExpressions");
            if (!json_is_array(exprs)) {
                exprs = json_array();
                json_object_set_new(t, "matchExpressions", exprs);
            }
            json_array_append(exprs, req);
        }
        json_decref(req);
    }
    return json_pack("{s:{s:{s:{s:o}}}}", "affinity", "nodeAffinity", REQUIRED, "nodeSelectorTerms", terms);
}

json_t *topoconfine_pod(const struct topoplace_set *s, const struct cache_pod *pod, const struct fit *f)
{
    if (s == NULL || s->domain == NULL)
        return NULL;
    const struct topo_domain *d = s->domain;
    if (d->key == NULL)
        return affinity_new(pod, hostname_requirement(d, f));
    for (uint32_t i = 0; pod->sched != NULL && i < pod->sched->nselector; i++) {
        const struct shape_label *l = &pod->sched->selector[i];
        if (strcmp(l->key, d->key) == 0 && !streq(l->value, d->name))
            return NULL; /* only additions: the pod's own value stands (and fit never places it in this domain) */
    }
    return json_pack("{s:{s:s}}", "nodeSelector", d->key, d->name);
}

/* The record's key of set s: "gang", "group/<name>" or "slice/<replica>" (new string). */
static char *set_key(const char *group, const char *replica)
{
    if (replica != NULL)
        return util_strdupf("slice/%s", replica);
    if (group != NULL)
        return util_strdupf("group/%s", group);
    return util_strdup("gang");
}

char *topoconfine_record(const struct topoplace_out *out)
{
    json_t *rec = json_object();
    for (size_t i = 0; i < out->nsets; i++) {
        const struct topoplace_set *s = &out->sets[i];
        if (s->domain == NULL)
            continue;
        char *key = set_key(s->group, s->replica);
        json_object_set_new(rec, key, json_string(s->domain->name));
        free(key);
    }
    if (out->spread)
        json_object_set_new(rec, "spread", json_true());
    char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(rec);
    if (text == NULL)
        abort();
    return text;
}

/*
 * The set pod is in under r, as topoplace_set_of() finds it: a group's own
 * (a slice of it when the group has numOfHosts > 1), else the gang-wide set
 * (slices under the gang-wide constraint alone are in the gang's domain).
 * Fills s's group, replica and constraint; returns 0 when it is in none.
 */
static int set_of(const struct topo_request *r, const struct cache_pod *pod, struct topoplace_set *s)
{
    memset(s, 0, sizeof(*s));
    int head = streq(pod->node_type, "head");
    for (size_t i = 0; !head && pod->group != NULL && i < r->ngroups; i++) {
        const struct topo_group *g = &r->groups[i];
        if (g->c.mode != TOPO_MODE_NONE && streq(g->name, pod->group)) {
            s->c = &g->c;
            s->group = g->name;
            s->replica = g->hosts > 1 ? pod->replica : NULL;
            return 1;
        }
    }
    s->c = &r->gang;
    return r->gang.mode != TOPO_MODE_NONE && (r->include_head || !head);
}

json_t *topoconfine_recorded(const char *record, const struct topo_request *r, const struct cache_pod *pod, struct topodomains *t,
                             const struct fit *f)
{
    struct topoplace_set s;
    if (record == NULL || r == NULL || !set_of(r, pod, &s))
        return NULL;
    json_t *rec = json_loads(record, 0, NULL);
    char *key = set_key(s.group, s.replica);
    const char *name = json_string_value(json_object_get(rec, key));
    free(key);
    size_t n = 0;
    const struct topo_domain *domains = name != NULL ? topodomain_get(t, s.c, &n) : NULL;
    for (size_t i = 0; i < n && s.domain == NULL; i++) {
        if (strcmp(domains[i].name, name) == 0)
            s.domain = &domains[i];
    }
    json_decref(rec);
    return topoconfine_pod(&s, pod, f);
}
