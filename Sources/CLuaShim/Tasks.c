// The tasks engine's C helpers: `native.closing` for TaskEngine.lua, and which threads are tasks'.
#include "CLuaShim.h"

int bk_stateclosing(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    lua_pushboolean(L, rt != NULL && bk_runtime_life(rt) != BK_LIFE_OPEN);
    return 1;
}

int bk_thread_is_task(lua_State *L, lua_State *co) {
    if (!lua_checkstack(L, 3) || !lua_checkstack(co, 1)) return 0;
    int found = 0;
    lua_pushliteral(L, "bk.tasks");
    if (lua_rawget(L, LUA_REGISTRYINDEX) == LUA_TTABLE) {  // raw: a script may give the registry a metatable
        lua_pushliteral(L, "taskThreads");
        if (lua_rawget(L, -2) == LUA_TTABLE) {
            lua_pushthread(co);
            if (co != L) lua_xmove(co, L, 1);
            found = lua_rawget(L, -2) == LUA_TBOOLEAN;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return found;
}
