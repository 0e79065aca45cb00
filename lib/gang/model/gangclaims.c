#include "gangclaims.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void gangclaims_finish(struct gangclaims *gc)
{
    if (gc == NULL)
        return;
    for (size_t i = 0; i < gc->n; i++)
        free(gc->uses[i].name);
    free(gc->uses);
    gc->uses = NULL;
    gc->n = 0;
}

/* Adds pods uses of name (a shared claim once), merging with an earlier use of the same. */
static void add_use(struct gangclaims *gc, const char *name, int shared, int64_t pods)
{
    for (size_t i = 0; i < gc->n; i++) {
        struct gangclaims_use *u = &gc->uses[i];
        if (u->shared == shared && strcmp(u->name, name) == 0) {
            u->pods = util_sat_add(u->pods, pods);
            return;
        }
    }
    gc->uses = util_realloc(gc->uses, (gc->n + 1) * sizeof(*gc->uses));
    gc->uses[gc->n++] = (struct gangclaims_use){.name = util_strdup(name), .shared = shared, .pods = pods};
}

/* The claims of a pod spec (borrowed; path names it) for pods pods. */
static int spec_claims(const json_t *pod_spec, const char *path, int64_t pods, struct gangclaims *out, struct error *err)
{
    const json_t *claims = json_object_get(pod_spec, "resourceClaims");
    if (claims != NULL && !json_is_array(claims) && !json_is_null(claims)) {
        error_setf(err, "%s.resourceClaims: must be a list", path);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(claims); i++) {
        const json_t *c = json_array_get(claims, i);
        const char *tmpl = json_string_value(json_object_get(c, "resourceClaimTemplateName"));
        const char *claim = json_string_value(json_object_get(c, "resourceClaimName"));
        if ((tmpl == NULL || tmpl[0] == '\0') == (claim == NULL || claim[0] == '\0')) {
            error_setf(err, "%s.resourceClaims[%zu]: must name exactly one of resourceClaimName and resourceClaimTemplateName",
                       path, i);
            return -1;
        }
        if (pods > 0)
            add_use(out, tmpl != NULL && tmpl[0] != '\0' ? tmpl : claim, claim != NULL && claim[0] != '\0', pods);
    }
    return 0;
}

int gangclaims_from_pod_spec(const json_t *pod_spec, struct gangclaims *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    if (spec_claims(pod_spec, "spec", 1, out, err) != 0) {
        gangclaims_finish(out);
        return -1;
    }
    return 0;
}

static const json_t *template_spec(const json_t *group)
{
    return json_object_get(json_object_get(group, "template"), "spec");
}

int gangclaims_from_raycluster(const json_t *raycluster, const struct gang_spec *spec, struct gangclaims *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    const json_t *rs = json_object_get(raycluster, "spec");
    if (spec_claims(template_spec(json_object_get(rs, "headGroupSpec")), "spec.headGroupSpec.template.spec", 1, out, err) != 0)
        goto fail;
    const json_t *groups = json_object_get(rs, "workerGroupSpecs");
    for (size_t i = 0; i < json_array_size(groups) && i < spec->ngroups; i++) {
        char path[96];
        util_format(path, sizeof(path), "spec.workerGroupSpecs[%zu].template.spec", i);
        if (spec_claims(template_spec(json_array_get(groups, i)), path, spec->groups[i].pods, out, err) != 0)
            goto fail;
    }
    return 0;
fail:
    gangclaims_finish(out);
    return -1;
}

/* Adds into out what gc's claims count as: their demand (shared ones too with with_shared), or their variants (fit). */
static int price_uses(const struct gangclaims *gc, const struct draset *s, const char *ns, int with_shared, int fit,
                      struct resources *out, struct error *why)
{
    struct resources one;
    resources_init(&one);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < gc->n; i++) {
        const struct gangclaims_use *u = &gc->uses[i];
        if (u->shared && !with_shared)
            continue;
        resources_finish(&one);
        rc = fit         ? draset_template_fit(s, ns, u->name, &one, why)
             : u->shared ? draset_claim_demand(s, ns, u->name, &one, why)
                         : draset_template_demand(s, ns, u->name, &one, why);
        if (rc == 0 && resources_add_scaled(out, &one, u->shared ? 1 : u->pods, why) != 0)
            rc = -1;
    }
    resources_finish(&one);
    return rc;
}

int gangclaims_price(const struct gangclaims *gc, const struct draset *s, const char *ns, int with_shared, struct resources *out,
                     struct error *why)
{
    return price_uses(gc, s, ns, with_shared, 0, out, why);
}

int gangclaims_price_known(const struct gangclaims *gc, const struct draset *s, const char *ns, struct resources *out,
                           json_t **skipped, struct error *err)
{
    struct resources one;
    resources_init(&one);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < gc->n; i++) {
        const struct gangclaims_use *u = &gc->uses[i];
        struct error why = {{0}};
        resources_finish(&one);
        rc = u->shared ? draset_claim_demand(s, ns, u->name, &one, &why) : draset_template_demand(s, ns, u->name, &one, &why);
        if (rc == 1) {
            if (*skipped == NULL)
                *skipped = json_array();
            json_array_append_new(*skipped, json_string(why.message));
            rc = 0;
        } else if (rc == 0 && resources_add_scaled(out, &one, u->shared ? 1 : u->pods, err) != 0) {
            rc = -1;
        } else if (rc != 0) {
            *err = why;
        }
    }
    resources_finish(&one);
    return rc;
}

int gangclaims_price_fit(const struct gangclaims *gc, const struct draset *s, const char *ns, struct resources *out,
                         struct error *why)
{
    return price_uses(gc, s, ns, 0, 1, out, why);
}
