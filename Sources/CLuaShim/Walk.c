// The collection helpers' fast path: a walk that calls a block on each element. Rule of this file:
// it runs inside ONE bk_pcall with no Swift frame live (Swift called bk_walk_run and waits), so it
// may raise freely (a block's error unwinds C frames only), and it uses raw table operations only.
#include "CLuaShim.h"

// Applies the walk's action to the block's answer on top (`value`: the element's slot when still
// on the stack, `key`: its key for dictionaries, else 0). Raw operations only.
static inline void bk_walk_apply(lua_State *L, bk_walk *w, int key, int value) {
    switch (w->action) {
        case BK_WALK_FOLD:
            lua_copy(L, -1, w->prefix);
            break;
        case BK_WALK_MAP:
            if (lua_type(L, -1) == LUA_TNIL) lua_copy(L, w->null, -1);
            if (key != 0) {
                lua_pushvalue(L, key);
                lua_rotate(L, -2, 1);
                lua_rawset(L, w->result);
            } else {
                lua_rawseti(L, w->result, ++w->appended);
            }
            break;
        case BK_WALK_KEEP:
        case BK_WALK_DROP:
            if (lua_toboolean(L, -1) == (w->action == BK_WALK_KEEP)) {
                if (key != 0) {
                    lua_pushvalue(L, key);
                    lua_pushvalue(L, value);
                    lua_rawset(L, w->result);
                } else {
                    lua_pushvalue(L, value);
                    lua_rawseti(L, w->result, ++w->appended);
                }
            }
            break;
        default:
            break;
    }
}

static int bk_walk_driver(lua_State *L) {
    bk_walk *w = (bk_walk *)lua_touserdata(L, -1);
    lua_settop(L, -2);
    int base = lua_gettop(L);
    int results = w->action == BK_WALK_DISCARD ? 0 : 1;
    int keepsValue = w->action == BK_WALK_KEEP || w->action == BK_WALK_DROP;
    // Lists: after a call, DISCARD and MAP (the answer is popped into the result) are back at base.
    int backAtBase = w->action == BK_WALK_DISCARD || w->action == BK_WALK_MAP;
    if (w->keys == 0) {
        int nargs = w->prefix != 0 ? 2 : 1;
        for (lua_Integer position = 1; position <= w->count; position++) {
            if (keepsValue) {
                if (lua_rawgeti(L, w->table, position) == LUA_TNIL) break;  // the list ends here
                lua_pushvalue(L, w->block);
                lua_pushvalue(L, base + 1);
            } else {
                // The element is read straight into the argument slot the call consumes.
                lua_pushvalue(L, w->block);
                if (w->prefix != 0) lua_pushvalue(L, w->prefix);
                if (lua_rawgeti(L, w->table, position) == LUA_TNIL) break;
            }
            lua_call(L, nargs, results);
            if (results != 0) bk_walk_apply(L, w, 0, base + 1);
            if (!backAtBase) lua_settop(L, base);
        }
    } else {
        int nargs = w->prefix != 0 ? 3 : 2;
        for (lua_Integer position = 1; position <= w->count; position++) {
            lua_rawgeti(L, w->keys, position);
            lua_pushvalue(L, base + 1);
            if (lua_rawget(L, w->table) != LUA_TNIL) {  // removed by an earlier block: skipped
                lua_pushvalue(L, w->block);
                if (w->prefix != 0) lua_pushvalue(L, w->prefix);
                lua_pushvalue(L, base + 1);
                lua_pushvalue(L, base + 2);
                lua_call(L, nargs, results);
                if (results != 0) bk_walk_apply(L, w, base + 1, base + 2);
            }
            lua_settop(L, base);
        }
    }
    lua_settop(L, base);
    return base;
}

int bk_walk_run(lua_State *L, bk_walk *walk, int handler) {
    int n = lua_gettop(L);
    if (!lua_checkstack(L, n + 2)) return BK_WALK_NO_STACK;
    lua_pushcfunction(L, bk_walk_driver);
    for (int i = 1; i <= n; i++) lua_pushvalue(L, i);
    lua_pushlightuserdata(L, walk);
    int status = bk_pcall(L, n + 1, n, handler);
    if (status != LUA_OK) return status;
    for (int i = 1; i <= n; i++) lua_copy(L, n + i, i);
    lua_settop(L, n);
    return LUA_OK;
}
