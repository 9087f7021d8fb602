/* SPDX-License-Identifier: MIT */
/* Error texts and names, generated from CANAL_ERRNO_MAP; and the library version. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strndup, strncasecmp, REG_STARTEND: also when built without the Makefile */
#endif
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

const char *canal_version(void)
{
    return CANAL_VERSION;
}
