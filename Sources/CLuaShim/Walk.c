// The collection helpers' fast path: a walk that calls a block on each element. Rule of this file:
// it runs in the trampoline's C frame AFTER the Swift body has returned (the body laid the walk out
// and returned BK_CONTINUE_WALK), so no Swift frame is live: it may raise freely (a block's error
// unwinds C frames only), and it uses raw table operations only. Blocks are called with lua_callk,
// so a block may yield (bk.sleep in a task): the walk's state lives in a userdata on the stack and
// the continuation picks the walk up where the block was called.
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

static int bk_walk_loop(lua_State *L, bk_walk *w);

// After the block of the current position returned (its answer on top): apply, next position.
static inline void bk_walk_after(lua_State *L, bk_walk *w) {
    int base = w->base;
    if (w->keys == 0) {
        if (w->action != BK_WALK_DISCARD) bk_walk_apply(L, w, 0, base + 1);
    } else {
        if (w->action != BK_WALK_DISCARD) bk_walk_apply(L, w, base + 1, base + 2);
    }
    lua_settop(L, base);
    w->position++;
}

// Lua calls this when a block that yielded is resumed and returns: the walk goes on.
static int bk_walk_k(lua_State *L, int status, lua_KContext context) {
    (void)status;
    bk_walk *w = (bk_walk *)context;
    bk_walk_after(L, w);
    return bk_walk_loop(L, w);
}

static int bk_walk_finish(lua_State *L, bk_walk *w) {
    lua_settop(L, w->base);
    if (w->returns == 0) return 0;
    lua_pushvalue(L, w->returns);
    return 1;
}

static int bk_walk_loop(lua_State *L, bk_walk *w) {
    // The hot loop works on locals; `w->position` is stored before each call, for the
    // continuation should the block yield.
    const int base = w->base, table = w->table, block = w->block, prefix = w->prefix;
    const lua_Integer count = w->count;
    const int results = w->action == BK_WALK_DISCARD ? 0 : 1;
    const int keepsValue = w->action == BK_WALK_KEEP || w->action == BK_WALK_DROP;
    lua_KContext context = (lua_KContext)w;
    lua_Integer position = w->position;
    if (w->keys == 0) {
        const int nargs = prefix != 0 ? 2 : 1;
        // After a call, DISCARD and MAP (the answer goes into the result) are back at base.
        const int backAtBase = w->action == BK_WALK_DISCARD || w->action == BK_WALK_MAP;
        for (; position <= count; position++) {
            if (keepsValue) {
                if (lua_rawgeti(L, table, position) == LUA_TNIL) break;  // the list ends here
                lua_pushvalue(L, block);
                lua_pushvalue(L, base + 1);
            } else {
                // The element is read straight into the argument slot the call consumes.
                lua_pushvalue(L, block);
                if (prefix != 0) lua_pushvalue(L, prefix);
                if (lua_rawgeti(L, table, position) == LUA_TNIL) break;
            }
            w->position = position;
            lua_callk(L, nargs, results, context, bk_walk_k);
            if (results != 0) bk_walk_apply(L, w, 0, base + 1);
            if (!backAtBase) lua_settop(L, base);
        }
    } else {
        const int nargs = prefix != 0 ? 3 : 2;
        for (; position <= count; position++) {
            lua_rawgeti(L, w->keys, position);
            lua_pushvalue(L, base + 1);
            if (lua_rawget(L, table) == LUA_TNIL) {  // removed by an earlier block: skipped
                lua_settop(L, base);
                continue;
            }
            lua_pushvalue(L, block);
            if (prefix != 0) lua_pushvalue(L, prefix);
            lua_pushvalue(L, base + 1);
            lua_pushvalue(L, base + 2);
            w->position = position;
            lua_callk(L, nargs, results, context, bk_walk_k);
            if (results != 0) bk_walk_apply(L, w, base + 1, base + 2);
            lua_settop(L, base);
        }
    }
    w->position = position;
    return bk_walk_finish(L, w);
}

void bk_walk_prepare(lua_State *L, const bk_walk *walk) {
    bk_walk *w = (bk_walk *)lua_newuserdatauv(L, sizeof(bk_walk), 0);
    *w = *walk;
}

int bk_walk_start(lua_State *L) {
    bk_walk *w = (bk_walk *)lua_touserdata(L, -1);
    if (w == NULL) return luaL_error(L, "bk: walk state missing");
    // The userdata stays on the stack (anchored, never moved) below everything the walk pushes.
    w->base = lua_gettop(L);
    w->position = 1;
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow");
    return bk_walk_loop(L, w);
}

// The synchronous form, for Swift code that needs the walk's results before it returns (the
// workers' pool runs the first elements in the caller to decide whether to go parallel): the same
// loop, from position `first`, inside ONE bk_pcall in a copy of the caller's frame (slots 1 ... top,
// written back on success). A block that yields gets "attempt to yield across a C-call boundary".
static int bk_walk_driver(lua_State *L) {
    bk_walk *w = (bk_walk *)lua_touserdata(L, -1);
    lua_settop(L, -2);
    w->base = lua_gettop(L);
    w->position = w->first > 1 ? w->first : 1;
    w->returns = 0;
    bk_walk_loop(L, w);
    return w->base;
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
