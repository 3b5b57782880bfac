/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/runid.h"

#include <stdio.h>

void
runid_format(int64_t unix_ms, const uint8_t rnd[10], char out[RUNID_LEN])
{
	uint64_t ms = (uint64_t)unix_ms;
	uint8_t b[16];

	/* unix_ts_ms: 48 bits, big-endian */
	for (int i = 0; i < 6; i++) {
		b[i] = (uint8_t)(ms >> (40 - 8 * i));
	}
	for (int i = 0; i < 10; i++) {
		b[6 + i] = rnd[i];
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x70); /* version 7 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* variant 10 */
	snprintf(out, RUNID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
}
