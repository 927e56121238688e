// SPDX-License-Identifier: MIT
/* fakev8.c with SmiShiftSize 0 (pointer compression): a V8 layout ember refuses, counted. */
#define FAKEV8_COMPRESSED
#include "fakev8.c"
