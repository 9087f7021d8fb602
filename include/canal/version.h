/* SPDX-License-Identifier: MIT */
/**
 * @file canal/version.h
 * The version of the headers, and of the library actually linked.
 */
#ifndef CANAL_VERSION_H
#define CANAL_VERSION_H

#include "export.h"

/** The major version of these headers: a change breaks the API. */
#define CANAL_VERSION_MAJOR 0
/** The minor version of these headers: additions to the API. */
#define CANAL_VERSION_MINOR 1
/** The patch version of these headers: fixes only. */
#define CANAL_VERSION_PATCH 0
/** The version of these headers as a string, "MAJOR.MINOR.PATCH". */
#define CANAL_VERSION "0.1.0"

/** The version of the library linked at run time ("MAJOR.MINOR.PATCH"); a static string. */
CANAL_API const char *canal_version(void);

#endif
