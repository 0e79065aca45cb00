#include "error.h"

#include <stdio.h>

#include <openssl/err.h>

#include "util.h"

void error_vsetf(struct error *err, const char *fmt, va_list ap)
{
    if (err == NULL)
        return;
    char buf[4 * sizeof(err->message)]; /* longer than message: util_format does the cut */
    vsnprintf(buf, sizeof(buf), fmt, ap);
    util_format(err->message, sizeof(err->message), "%s", buf);
}

void error_setf(struct error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(err, fmt, ap);
    va_end(ap);
}

void error_set_openssl(struct error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(err, fmt, ap);
    va_end(ap);
    if (err != NULL)
        util_append_openssl_error(err->message, sizeof(err->message));
    else
        ERR_clear_error();
}
