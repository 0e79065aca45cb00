/* cacheguard: the controller's lock (cacheguard.h). */
#include "cacheguard.h"

#include <pthread.h>
#include <stdlib.h>

#include "util.h"

struct cacheguard {
    pthread_mutex_t mu;
};

struct cacheguard *cacheguard_create(void)
{
    struct cacheguard *g = util_calloc(1, sizeof(*g));
    pthread_mutex_init(&g->mu, NULL);
    return g;
}

void cacheguard_destroy(struct cacheguard *g)
{
    if (g == NULL)
        return;
    pthread_mutex_destroy(&g->mu);
    free(g);
}

void cacheguard_lock(struct cacheguard *g)
{
    pthread_mutex_lock(&g->mu);
}

void cacheguard_unlock(struct cacheguard *g)
{
    pthread_mutex_unlock(&g->mu);
}
