// The write of an observed table's key (its proxy metatable's __newindex), in C: the case of every
// write to a key with one plain observer costs a store and a protected call of the observer, no
// Lua frame for the metamethod itself. Everything else goes to the observation engine's Lua
// __newindex (ObservationEngine.lua), which this calls in its place.
#include "CLuaShim.h"

// Upvalues of the closure.
#define SINGLES lua_upvalueindex(1)   // key -> the one plain observer's task (maintained by the engine)
#define STORE lua_upvalueindex(2)     // the table's moved (observed) fields
#define HANDLER lua_upvalueindex(3)   // the message handler that records the traceback
#define REPORT lua_upvalueindex(4)    // report(err): to bk.onError
#define GENERAL lua_upvalueindex(5)   // the engine's __newindex for every other write

static int bk_observed_write_reported(lua_State *L, int status, lua_KContext ctx);

// After the observer returned (or, when it suspended its task, once it ended): report its error.
static int bk_observed_write_done(lua_State *L, int status, lua_KContext ctx) {
    (void)ctx;
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_pushvalue(L, REPORT);
        lua_insert(L, -2);
        lua_callk(L, 1, 0, 0, bk_observed_write_reported);
    }
    return 0;
}

static int bk_observed_write_reported(lua_State *L, int status, lua_KContext ctx) {
    (void)L; (void)status; (void)ctx;
    return 0;
}

// __newindex(t, k, v). Yieldable: the observer may suspend the task that wrote (lua_pcallk and
// lua_callk with continuations), as it could when the metamethod was Lua.
static int bk_observed_write(lua_State *L) {
    lua_settop(L, 3);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, SINGLES) == LUA_TFUNCTION) {   // stack: t k v task
        lua_pushvalue(L, 2);
        lua_pushvalue(L, 3);
        lua_rawset(L, STORE);
        lua_pushvalue(L, HANDLER);
        lua_insert(L, 4);                            // t k v handler task
        lua_pushvalue(L, 1);
        int status = lua_pcallk(L, 1, 0, 4, 0, bk_observed_write_done);
        return bk_observed_write_done(L, status, 0);
    }
    lua_settop(L, 3);
    lua_pushvalue(L, GENERAL);
    lua_insert(L, 1);
    lua_callk(L, 3, 0, 0, bk_observed_write_reported);
    return 0;
}

int bk_push_observed_write(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checkany(L, 3);
    luaL_checkany(L, 4);
    luaL_checktype(L, 5, LUA_TFUNCTION);
    lua_settop(L, 5);
    lua_pushcclosure(L, bk_observed_write, 5);
    return 1;
}
