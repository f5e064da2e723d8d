// Tracebacks that name a function the way the script called it.
#ifndef CLUASHIM_TRACEBACK_H
#define CLUASHIM_TRACEBACK_H

#include <lua.h>

/// luaL_traceback (Lua 5.4.6) with one difference: a function that has several global names (the
/// bridge's `bk.map` is also the global `bk_map`) is named by the name the calling code used
/// (`bk.map(...)` gives "function 'bk.map'", `bk_map(...)` "function 'bk_map'"), where Lua names
/// whichever `package.loaded` happens to list first. [-0, +1, m]
void bk_luatraceback(lua_State *L, lua_State *L1, const char *msg, int level);

#endif
