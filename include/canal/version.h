/* SPDX-License-Identifier: MIT */
/**
 * @file canal/version.h
 * The version of the headers, and of the library actually linked.
 */
#ifndef CANAL_VERSION_H
#define CANAL_VERSION_H

#include "export.h"

#define CANAL_VERSION_MAJOR 0
#define CANAL_VERSION_MINOR 1
#define CANAL_VERSION_PATCH 0
/** The version of these headers as a string, "MAJOR.MINOR.PATCH". */
#define CANAL_VERSION "0.1.0"

/** The version of the library linked at run time ("MAJOR.MINOR.PATCH"); a static string. */
CANAL_API const char *canal_version(void);

#endif
