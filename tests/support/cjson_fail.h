/* cJSON allocations that fail on demand, for tests of JSON building: the
 * hooks count every allocation cJSON makes and fail the Nth. cJSON's hooks
 * are process-wide, so a test installs them around the call it checks. */
#ifndef GPO_TEST_CJSON_FAIL_H
#define GPO_TEST_CJSON_FAIL_H

/* Fails the `n`th cJSON allocation from now (1 = the next); 0 fails none.
 * Resets the count. */
void cjson_fail_at(long n);

/* cJSON allocations since the last cjson_fail_at. */
long cjson_allocations(void);

/* Puts cJSON's own allocator back. */
void cjson_fail_off(void);

#endif
