/* plugin_bad.c: plugins that train_order must refuse (tests/e2e/test_plugin.c), one per -D flag: BAD_nomagic (no
 * RG_PLUGIN_MAGIC), BAD_version (built against the next minor version), BAD_layout (descriptors of another size),
 * BAD_small (an int named rg_plugin_magic: smaller than the record, never read past its end), BAD_init
 * (rg_plugin_init fails with a message), BAD_silent (it fails without one). Each init would register an encoding
 * named "bad": the tests check it never runs when the record is refused. */
#include <ropegrad/ropegrad.h>
#include <ropegrad/engine/plugin.h>

#if defined(BAD_version)
const rg_plugin_magic_t rg_plugin_magic = {"rgplug", RG_PLUGIN_ABI, RG_VERSION_MAJOR, RG_VERSION_MINOR + 1, 0,
                                           (int)sizeof(rg_real), (int)sizeof(rg_pos_encoding),
                                           (int)sizeof(rg_task_desc)};
#elif defined(BAD_layout)
const rg_plugin_magic_t rg_plugin_magic = {"rgplug", RG_PLUGIN_ABI, RG_VERSION_MAJOR, RG_VERSION_MINOR, 0,
                                           (int)sizeof(rg_real), (int)sizeof(rg_pos_encoding) + 8,
                                           (int)sizeof(rg_task_desc)};
#elif defined(BAD_small)
__attribute__((visibility("default"))) extern const int rg_plugin_magic;
const int rg_plugin_magic = 1;
#elif !defined(BAD_nomagic)
RG_PLUGIN_MAGIC;
#endif

#if !defined(BAD_init) && !defined(BAD_silent)
static const rg_pos_encoding BAD = {.name = "bad", .doc = "must never be registered"};
#endif

rg_status rg_plugin_init(void)
{
#if defined(BAD_init)
    return rg_error(RG_ERR_ARG, "plugin_bad: refusing on purpose");
#elif defined(BAD_silent)
    return RG_ERR_ARG; /* no rg_error: the program must not print an older message as the reason */
#else
    return rg_pos_register(&BAD, NULL);
#endif
}
