/*
 * dravariant: a claim request's own selectors on its class as a device
 * resource of their own, "<class> devices where <selectors>", so that the
 * node fit finds a device that both the class and the request select. Only a
 * pod's fit request names a variant (draset_template_fit), never a queue: a
 * queue counts the class's resource. Keyed by the class's name and the
 * selectors' texts; never removed while their set lives (there are few
 * distinct ones). The draset numbers them among its device resources and
 * its ledger counts them. Pure.
 */
#ifndef RAYGATE_DRAVARIANT_H
#define RAYGATE_DRAVARIANT_H

#include <stddef.h>

#include "claimspec.h"
#include "devsel.h"

struct dravariant {
    char *cls;           /* owned: the deviceClassName */
    char **exprs;        /* owned: the request's CEL texts */
    struct devsel **sel; /* owned: compiled from exprs */
    size_t nsel;
    int resource; /* its device resource's number */
};

struct dravariants {
    struct dravariant *v; /* owned */
    size_t n;
};

/* The resource number of request r's variant, or -1 when r has no selectors of its own or none was added. */
int dravariant_find(const struct dravariants *vs, const struct claimspec_request *r);

/* The name a variant of r goes by (new string): "gpu.example.com devices where device.attributes[...].model == \"a\"". */
char *dravariant_name(const struct claimspec_request *r);

/* Adds r's variant (r has selectors; not found) as resource number resource. */
void dravariant_add(struct dravariants *vs, const struct claimspec_request *r, int resource);

/* 1 when every selector of variant v selects d (its class's are checked apart). */
int dravariant_match(const struct dravariant *v, const struct devsel_device *d);

/* Frees what vs holds, leaving it empty. */
void dravariant_clear(struct dravariants *vs);

#endif
