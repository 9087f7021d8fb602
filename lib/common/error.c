/* SPDX-License-Identifier: MIT */
/* Error texts and names, generated from CANAL_ERRNO_MAP; and the library version. */
#include <stdarg.h>
#include <stdio.h>
#include "canal/error.h"
#include "canal/version.h"

const char *canal_strerror(int err)
{
    switch (err) {
#define XX(name, value, text)                                                                  \
    case value:                                                                                \
        return text;
        CANAL_ERRNO_MAP(XX)
#undef XX
    }
    return "unknown error";
}

const char *canal_err_name(int err)
{
    switch (err) {
#define XX(name, value, text)                                                                  \
    case value:                                                                                \
        return "CANAL_" #name;
        CANAL_ERRNO_MAP(XX)
#undef XX
    }
    return "CANAL_EUNKNOWN";
}

int canal_error_set(canal_error_info_t *err, int code, size_t position, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    err->position = position;
    if (fmt == NULL) {
        snprintf(err->message, sizeof(err->message), "%s", canal_strerror(code));
        return code;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return code;
}

const char *canal_version(void)
{
    return CANAL_VERSION;
}
