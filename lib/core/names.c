#include "names.h"

#include <string.h>

char *names_podgroup(const char *cluster)
{
    return util_strdupf(NAMES_PODGROUP_PREFIX "%s" NAMES_PODGROUP_SUFFIX, cluster);
}

void names_podgroup_put(struct util_buf *b, const char *cluster)
{
    util_buf_puts(b, NAMES_PODGROUP_PREFIX);
    util_buf_puts(b, cluster);
    util_buf_puts(b, NAMES_PODGROUP_SUFFIX);
}

char *names_podgroup_cluster(const char *name)
{
    const size_t pre = strlen(NAMES_PODGROUP_PREFIX), suf = strlen(NAMES_PODGROUP_SUFFIX);
    size_t n = name != NULL ? strlen(name) : 0;
    if (n <= pre + suf || strncmp(name, NAMES_PODGROUP_PREFIX, pre) != 0 || strcmp(name + n - suf, NAMES_PODGROUP_SUFFIX) != 0)
        return NULL;
    return util_memdup(name + pre, n - pre - suf);
}

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int names_dns_subdomain(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!is_lower_alnum(s[i]) && s[i] != '-')
                return 0;
            continue;
        }
        if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
            return 0;
        start = i + 1;
    }
    return 1;
}
