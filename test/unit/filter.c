/* SPDX-License-Identifier: MIT */
/*
 * Linked into every cmocka test binary: when CANAL_TEST_FILTER is set (make check F=...), only
 * the tests whose names match that pattern run (cmocka's own filter: * and ? wildcards).
 * cmocka 1.1 reads no such variable itself, hence this constructor, which runs before main().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

__attribute__((constructor)) static void canal_test_filter(void)
{
    const char *pattern = getenv("CANAL_TEST_FILTER");
    if (pattern != NULL && pattern[0] != '\0')
        cmocka_set_test_filter(pattern);
}
