// The write of an observed table's key (its proxy metatable's __newindex), in C: the case of every
// write to a key with one plain observer costs a store and a protected call of the observer, no
// Lua frame for the metamethod itself. Everything else goes to the observation engine's Lua
// __newindex (ObservationEngine.lua), which this calls in its place.
#include "CLuaShim.h"

// The closure's upvalues. makeWrite's argument names each (`upvalue_names`, one field per slot),
// so the engine never passes them by position. Which keys are in SINGLES is decided by the engine
// alone (ObservationEngine.lua: fastTask, summarize); this file only obeys it.
enum {
    SINGLES_SLOT = 1,  // key -> the one plain observer's task (maintained by the engine)
    STORE_SLOT,        // the table's moved (observed) fields
    HANDLER_SLOT,      // the message handler that records the traceback
    REPORT_SLOT,       // report(err): to bk.onError
    GENERAL_SLOT,      // the engine's __newindex for every other write
    UPVALUE_COUNT = GENERAL_SLOT
};
static const char *const upvalue_names[UPVALUE_COUNT + 1] = {
    [SINGLES_SLOT] = "singles", [STORE_SLOT] = "store", [HANDLER_SLOT] = "handler",
    [REPORT_SLOT] = "report", [GENERAL_SLOT] = "general",
};
#define SINGLES lua_upvalueindex(SINGLES_SLOT)
#define STORE lua_upvalueindex(STORE_SLOT)
#define HANDLER lua_upvalueindex(HANDLER_SLOT)
#define REPORT lua_upvalueindex(REPORT_SLOT)
#define GENERAL lua_upvalueindex(GENERAL_SLOT)

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
    static const int expected[UPVALUE_COUNT + 1] = {
        [SINGLES_SLOT] = LUA_TTABLE, [STORE_SLOT] = LUA_TTABLE, [HANDLER_SLOT] = LUA_TFUNCTION,
        [REPORT_SLOT] = LUA_TNONE, [GENERAL_SLOT] = LUA_TFUNCTION,  // LUA_TNONE: any value
    };
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    for (int slot = 1; slot <= UPVALUE_COUNT; slot++) {
        lua_pushstring(L, upvalue_names[slot]);
        int type = lua_rawget(L, 1);
        if (type == LUA_TNIL || (expected[slot] != LUA_TNONE && type != expected[slot])) {
            return luaL_error(L, "makeWrite: field '%s' is a %s", upvalue_names[slot], lua_typename(L, type));
        }
    }
    lua_pushcclosure(L, bk_observed_write, UPVALUE_COUNT);
    return 1;
}
