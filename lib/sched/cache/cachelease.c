#include "cachelease.h"

#include "dispatchlease.h"

int cachelease_take_news(struct cache *c)
{
    int news = c->lease_news;
    c->lease_news = 0;
    return news;
}

void cachelease_keep_news(struct cache *c)
{
    c->lease_news = 1;
}

void cachelease_written(struct cache *c, struct cache_gang *g, uint64_t counter, int ok)
{
    if (ok)
        dispatchlease_mark_recorded(g->lease, counter);
    else if (dispatchlease_record_wanted(g->lease))
        c->lease_news = 1;
}
