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

#endif
