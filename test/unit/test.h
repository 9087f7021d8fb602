/* SPDX-License-Identifier: MIT */
/* Common includes for canal's unit tests: cmocka needs these before <cmocka.h>. */
#ifndef CANAL_TEST_H
#define CANAL_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* The source tree, where tests find their data files, so that they run from any directory
 * (the Makefile passes the absolute path). */
#ifndef CANAL_SRCDIR
#define CANAL_SRCDIR "."
#endif

#endif
