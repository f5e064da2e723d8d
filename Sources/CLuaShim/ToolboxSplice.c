// The toolbox's flatten over plain lists (ToolboxSequences.lua), in C: the per-row type and
// metatable checks cost Lua two C calls per nested list, more than the splice itself.
//
// Called from Lua (no Swift frame is live: it may raise) with no block in between, and it makes no
// collector step (raw reads and raw sets only; lua_rawseti grows the result without a GC step, and
// an emergency collection runs no finalizers), so no script code runs while it reads its slots.
// A script can still reach it (debug.getupvalue), so it checks its arguments.
#include "CLuaShim.h"

int bk_toolbox_splice(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer count = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_Integer i = luaL_checkinteger(L, 4);
    lua_Integer n = luaL_checkinteger(L, 5);
    lua_settop(L, 5);
    for (; i <= n; i++) {
        if (lua_rawgeti(L, 3, i) == LUA_TTABLE) {  // slot 6
            if (lua_getmetatable(L, 6)) break;  // the Lua side's (a kind, an observed table, ...)
            if (lua_rawgeti(L, 6, 1) != LUA_TNIL) {  // slot 7: a plain list, spliced raw
                lua_Integer j = 1;
                do {
                    lua_rawseti(L, 1, ++count);  // pops slot 7
                } while (lua_rawgeti(L, 6, ++j) != LUA_TNIL);
                lua_settop(L, 5);
                continue;
            }
            lua_settop(L, 6);  // an empty table (or {nil, x}) stays an element
        }
        lua_rawseti(L, 1, ++count);  // pops slot 6
    }
    lua_settop(L, 5);
    lua_pushinteger(L, count);
    lua_pushinteger(L, i);
    return 2;
}
