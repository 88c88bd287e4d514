/* test_errors.c (float32): the library's error messages (tensor.h): rg_error records a message for the calling
 * thread and returns its status; rg_last_error reads it back, "" before any; rg_error_clear forgets it (the plugin
 * loader clears it before a plugin's init, so that an older message is never printed as that init's reason); each
 * thread has its own. */
#include "common.h"

#include <pthread.h>
#include <string.h>

static void *other_thread(void *arg)
{
    char *seen = arg;
    strcpy(seen, rg_last_error()); /* the main thread's message is not this thread's */
    rg_error(RG_ERR_IO, "from the other thread");
    return NULL;
}

static void test_record_clear_and_threads(void **state)
{
    assert_int_equal(rg_error(RG_ERR_FORMAT, "file %s: %d bytes", "x.h5", 7), RG_ERR_FORMAT);
    assert_string_equal(rg_last_error(), "file x.h5: 7 bytes");
    pthread_t t;
    char seen[64] = "unset";
    assert_int_equal(pthread_create(&t, NULL, other_thread, seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(seen, "");
    assert_string_equal(rg_last_error(), "file x.h5: 7 bytes"); /* the other thread's did not replace it */
    rg_error_clear();
    assert_string_equal(rg_last_error(), "");
    assert_int_equal(rg_error(RG_ERR_ARG, "again"), RG_ERR_ARG);
    assert_string_equal(rg_last_error(), "again");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_clear_and_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
