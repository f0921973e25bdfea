/* mw-module.c — linked into each shared object that cc-memwrap links with
 * -shared.  Such an object does not carry the runtime: it depends on
 * libmemwrap.so (the runtime built as a shared library), so a host that is
 * not instrumented (a plugin loader, Python, Lua) can load it, and every
 * instrumented object of one process shares one runtime — the program's own
 * when it is instrumented (it exports the runtime's symbols, which then win
 * the dynamic linker's lookup), else libmemwrap.so's.
 *
 * What it adds is this constructor: it hands the object's own tables of
 * units and static objects (hidden section bounds, so they are this
 * object's) to that runtime, as the constructor of an embedded runtime copy
 * does for the object that holds it. */
#include "../mw-internal.h"

__attribute__((constructor(101))) static void mw_module_ctor(void)
{
  mw_image_add(__start_mw_units, __stop_mw_units, __start_mw_statics, __stop_mw_statics);
}
