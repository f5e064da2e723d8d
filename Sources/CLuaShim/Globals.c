// bk_install_globals: `bk` and the `bk_NAME` globals, in C so that no Swift string is made per
// name (it runs at every bklua start). Raw table operations only; called from Swift, so its
// allocations never fail (see bk_runtime) and nothing here raises.
#include "CLuaShim.h"
#include <string.h>

void bk_install_globals(lua_State *L, int globals, int module) {
    globals = lua_absindex(L, globals);
    module = lua_absindex(L, module);
    int base = lua_gettop(L);
    // The names first: `globals` may be the module itself (bk.installGlobals(bk)), and a table must
    // not gain keys while lua_next walks it.
    lua_createtable(L, 96, 0);
    int names = lua_gettop(L);
    lua_Integer count = 0;
    lua_pushnil(L);
    while (lua_next(L, module)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION
            && strncmp(lua_tostring(L, -2), "bk_", 3) != 0) {
            lua_pushvalue(L, -2);
            lua_rawseti(L, names, ++count);
        }
        lua_pop(L, 1);
    }
    lua_pushliteral(L, "bk");
    lua_pushvalue(L, module);
    lua_rawset(L, globals);
    for (lua_Integer i = 1; i <= count; i++) {
        lua_rawgeti(L, names, i);
        lua_pushfstring(L, "bk_%s", lua_tostring(L, -1));
        lua_pushvalue(L, -2);
        lua_rawget(L, module);
        lua_rawset(L, globals);
        lua_pop(L, 1);
    }
    lua_settop(L, base);
}
