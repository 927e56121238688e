/* SPDX-License-Identifier: MIT */
#ifndef EMBER_VERSION_H
#define EMBER_VERSION_H
#define EMBER_VERSION "0.1.0"
#endif
