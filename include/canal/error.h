/* SPDX-License-Identifier: MIT */
/**
 * @file canal/error.h
 * Error codes. Functions that can fail return 0 on success and one of these negative
 * codes on failure; constructors return NULL. Functions that parse user text (route
 * templates) can also fill a canal_error_info_t with the position and a message.
 */
#ifndef CANAL_ERROR_H
#define CANAL_ERROR_H

#include <stddef.h>
#include "export.h"

/** X-macro of every error: name and the text canal_strerror() gives for it. */
#define CANAL_ERRNO_MAP(XX)                                                                 \
    XX(EINVAL, -1, "invalid argument")                                                      \
    XX(ENOMEM, -2, "out of memory")                                                         \
    XX(EEXIST, -3, "already registered")                                                    \
    XX(ESYNTAX, -4, "syntax error")                                                         \
    XX(ENOTFOUND, -5, "not found")                                                          \
    XX(EMETHOD, -6, "method not allowed")                                                   \
    XX(ERANGE, -7, "value out of range")                                                    \
    XX(ETYPE, -8, "value has the wrong type")                                               \
    XX(ELIMIT, -9, "limit exceeded")                                                        \
    XX(EBADREQ, -10, "bad request")                                                         \
    XX(ESTATE, -11, "not allowed in this state")                                            \
    XX(ESYS, -12, "system call failed")                                                     \
    XX(EHELP, -13, "help asked for")                                                        \
    XX(EAGAIN, -14, "try again later: the queue is full")                                  \
    XX(ECLOSED, -15, "closed: the other side is gone")

/** The error codes: CANAL_EINVAL, CANAL_ENOMEM, ... all negative. */
typedef enum canal_errno {
/** Internal: turns one CANAL_ERRNO_MAP() entry into an enum constant. */
#define CANAL__ERRNO_ENUM(name, value, text) CANAL_##name = value,
    CANAL_ERRNO_MAP(CANAL__ERRNO_ENUM)
#undef CANAL__ERRNO_ENUM
} canal_errno_t;

/** Where and why parsing user text failed. Filled only when a function returns an error. */
typedef struct canal_error_info {
    int code;          /**< the canal_errno_t returned */
    size_t position;   /**< byte offset in the text where the fault was found */
    char message[160]; /**< a sentence for a human, NUL-terminated */
} canal_error_info_t;

/** The text for an error code ("invalid argument"); "unknown error" for other values. Static. */
CANAL_API const char *canal_strerror(int err);
/** The name of an error code ("CANAL_EINVAL"); "CANAL_EUNKNOWN" for other values. Static. */
CANAL_API const char *canal_err_name(int err);

/**
 * Fills *err (if err is not NULL) with code, position and the message (printf format; NULL:
 * canal_strerror(code)), cut to fit. Returns code, so a failing call can end with
 * `return canal_error_set(err, CANAL_EINVAL, 0, "no handler");`.
 */
CANAL_API int canal_error_set(canal_error_info_t *err, int code, size_t position, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
