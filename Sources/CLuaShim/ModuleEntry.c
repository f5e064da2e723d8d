// bk.so's entry point for the stock lua5.4 interpreter (`require "bk"`). The module itself is built
// in Swift (bk_open_module), which returns a status; errors are raised here, after Swift returned.
#define _GNU_SOURCE  // dladdr
#include "CLuaShim.h"
#include <dlfcn.h>

lua_State *bk_mainthread(lua_State *L) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lua_State *main = lua_tothread(L, -1);
    lua_pop(L, 1);
    return main;
}

int luaopen_bk(lua_State *L) {
    // lua_close dlcloses C modules, but the Swift runtime and Dispatch's worker threads keep
    // running code of this library until the process ends: pin it (never unloaded).
    Dl_info info;
    if (dladdr((void *)luaopen_bk, &info) != 0 && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    int n = bk_open_module(L);
    if (n >= 0) bk_wrap_os_exit(L);  // after the module: the allocator (bk_runtime_of) is bk's now
    if (n < 0) return lua_error(L);
    return n;
}

