/* SPDX-License-Identifier: MIT */
/**
 * @file canal/export.h
 * The visibility macro. Only declarations marked CANAL_API leave the shared library;
 * everything else is built with -fvisibility=hidden.
 */
#ifndef CANAL_EXPORT_H
#define CANAL_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
/** Marks a function as part of canal's public, exported API. */
#define CANAL_API __attribute__((visibility("default")))
#else
#define CANAL_API
#endif

#endif
