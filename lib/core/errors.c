#include "errors.h"

#include <stdio.h>

#include "util.h"

void error_setf(struct error *err, const char *fmt, ...)
{
    if (err == NULL)
        return;
    char buf[4 * sizeof(err->message)]; /* longer than message: util_format does the cut */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    util_format(err->message, sizeof(err->message), "%s", buf);
}
