// The collection helpers' fast path: a walk that calls a block on each element. Rule of this file:
// it runs in the trampoline's C frame AFTER the Swift body has returned (the body laid the walk out
// and returned BK_CONTINUE_WALK), so no Swift frame is live: it may raise freely (a block's error
// unwinds C frames only), and it uses raw table operations only. Blocks are called with lua_callk,
// so a block may yield (bk.sleep in a task): the walk's state lives in a userdata on the stack and
// the continuation picks the walk up where the block was called.
//
// A block can rewrite any slot of this frame (debug.setlocal reaches a C function's temporaries),
// so after every call the walk trusts nothing on the stack: it checks that its userdata is still
// in its slot (which is also what keeps it alive) and that the slots it uses raw still hold the
// values it recorded (type and address; the originals are anchored in the userdata's user values,
// so an address cannot be reused while the walk runs). The continuation's context is the stack
// index of the userdata, never its address: it finds the walk again and checks it the same way.
#include "CLuaShim.h"
#include <string.h>

// The slots a walk uses raw (the collection, its keys, a result table) and what they held when
// it started: checked after every block call, type then address (the type is what makes a raw
// operation safe; the address, that it is still the same table: the originals are anchored in
// the userdata's user values, so while it lives no other object can take their addresses).
#define BK_WALK_ANCHORS 3
typedef struct bk_walk_anchors {
    int slots[BK_WALK_ANCHORS];  // 0: unused
    const void *addresses[BK_WALK_ANCHORS];
} bk_walk_anchors;

// The walk's userdata: the walk as laid out, and what identifies it to its continuation.
typedef struct bk_walk_state {
    const void *tag;        // &bk_walk_tag: a walk made by bk_walk_prepare (not another userdata)
    lua_State *thread;      // the thread whose frame the walk runs in
    bk_walk_anchors anchors;
    bk_walk walk;
} bk_walk_state;

static const char bk_walk_tag = 0;

// Raises the walk's clear error: its frame was changed by the block (or the continuation cannot
// find its walk). Runs in the trampoline's frame or its continuation: raising is safe here.
static int bk_walk_changed(lua_State *L) {
    bk_pushframechanged(L);  // no position: the same message from the loop and the continuation
    return lua_error(L);
}

// The slots used raw still hold the tables they held: one check per block call. Value slots (the
// accumulator, a search's answer, `null`) and the block may hold anything: they are only copied
// or called, never used raw (a block replaced by another value is called as Lua would call it).
static inline void bk_walk_check_anchors(lua_State *L, const bk_walk_anchors *a) {
    for (int i = 0; i < BK_WALK_ANCHORS; i++) {
        int slot = a->slots[i];
        if (slot == 0) continue;
        if (__builtin_expect(lua_type(L, slot) != LUA_TTABLE || lua_topointer(L, slot) != a->addresses[i], 0))
            bk_walk_changed(L);
    }
}

// The walk whose userdata should be at `base`, checked: a full userdata of a walk's size (so its
// memory may be read), the tag, this thread and this base. Raises otherwise.
static bk_walk_state *bk_walk_at(lua_State *L, int base) {
    if (base < 1 || base > lua_gettop(L) || lua_type(L, base) != LUA_TUSERDATA ||
        lua_rawlen(L, base) != sizeof(bk_walk_state))
        bk_walk_changed(L);
    bk_walk_state *s = (bk_walk_state *)lua_touserdata(L, base);
    if (s->tag != &bk_walk_tag || s->thread != L || s->walk.base != base) bk_walk_changed(L);
    bk_walk_check_anchors(L, &s->anchors);
    return s;
}

// Ends the walk after the current position (a search found its answer): the loop breaks on the
// apply's answer, and a continuation finds no positions left.
static inline int bk_walk_stop(bk_walk *w) {
    w->count = 0;
    return 1;
}

// reduceInteger / reduceFloat: the block's answer on top is not what the fold needs. The block is
// their argument 3; the messages are the ones they give from Swift.
static int bk_walk_fold_error(lua_State *L) {
    int isnum;
    (void)lua_tonumberx(L, -1, &isnum);
    if (isnum)  // only an integer fold refuses a number (2.5, "2.5")
        return bk_walk_argerror(L, 3, "block returned a number with no integer representation");
    const char *msg = lua_pushfstring(L, "block returned %s, number expected", luaL_typename(L, -1));
    return bk_walk_argerror(L, 3, msg);
}

// Applies the walk's action to the block's answer on top (`value`: the element's slot when still
// on the stack, `key`: its key for dictionaries, else 0). Raw operations only. Returns 1 when the
// walk stops here.
static inline int bk_walk_apply(lua_State *L, bk_walk *w, int key, int value) {
    switch (w->action) {
        case BK_WALK_FOLD_INTEGER: {
            int isnum;
            lua_Integer n = lua_tointegerx(L, -1, &isnum);
            if (!isnum) bk_walk_fold_error(L);
            lua_pushinteger(L, n);
            lua_replace(L, w->prefix);
            break;
        }
        case BK_WALK_FOLD_FLOAT: {
            int isnum;
            lua_Number n = lua_tonumberx(L, -1, &isnum);
            if (!isnum) bk_walk_fold_error(L);
            lua_pushnumber(L, n);
            lua_replace(L, w->prefix);
            break;
        }
        case BK_WALK_FIND:
            if (lua_toboolean(L, -1)) {
                lua_copy(L, value, w->result);
                return bk_walk_stop(w);
            }
            break;
        case BK_WALK_STOP_IF_TRUE:
        case BK_WALK_STOP_IF_FALSE:
            if (lua_toboolean(L, -1) == (w->action == BK_WALK_STOP_IF_TRUE)) {
                lua_pushboolean(L, !lua_toboolean(L, w->result));
                lua_replace(L, w->result);
                return bk_walk_stop(w);
            }
            break;
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
    return 0;
}

static int bk_walk_loop(lua_State *L, const bk_walk_state *s, bk_walk *w);

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

// The continuation's context: the userdata's slot and the position being visited, never an
// address (the userdata may be gone by the time the task resumes).
#define BK_WALK_BASE_BITS 21  /* LUAI_MAXSTACK is 1,000,000 */
static inline lua_KContext bk_walk_context(int base, lua_Integer position) {
    return (lua_KContext)(((intptr_t)position << BK_WALK_BASE_BITS) | (intptr_t)base);
}

// Lua calls this when a block that yielded is resumed and returns: the walk goes on. While the
// task was suspended the slot may have been rewritten and the userdata collected, so the walk
// is looked up and checked again (bk_walk_at); the count of a list result is its length (the
// loop keeps it in a local, which a yield loses).
static int bk_walk_k(lua_State *L, int status, lua_KContext context) {
    (void)status;
    const bk_walk_state *s = bk_walk_at(L, (int)(context & ((1 << BK_WALK_BASE_BITS) - 1)));
    bk_walk w = s->walk;
    w.position = (lua_Integer)(context >> BK_WALK_BASE_BITS);
    if (w.result != 0 && (w.action == BK_WALK_MAP || w.action == BK_WALK_KEEP || w.action == BK_WALK_DROP))
        w.appended = (lua_Integer)lua_rawlen(L, w.result);  // anchored: a table (bk_walk_at)
    bk_walk_after(L, &w);
    return bk_walk_loop(L, s, &w);
}

static int bk_walk_finish(lua_State *L, bk_walk *w) {
    lua_settop(L, w->base);
    if (w->returns == 0) return 0;
    lua_pushvalue(L, w->returns);
    return 1;
}

// The loop works on `w`, the caller's copy of the walk (never on the userdata, which a block can
// have freed): its position goes into the continuation's context, its other state stays here.
// After each call, the slots used raw are checked (bk_walk_check_anchors) before anything else.
static int bk_walk_loop(lua_State *L, const bk_walk_state *s, bk_walk *w) {
    const int base = w->base, table = w->table, block = w->block, prefix = w->prefix;
    const int results = w->action == BK_WALK_DISCARD ? 0 : 1;
    const int keepsValue = w->action == BK_WALK_KEEP || w->action == BK_WALK_DROP || w->action == BK_WALK_FIND;
    const bk_walk_anchors anchors = s->anchors;  // a copy: `s` is not read again in the loop
    lua_Integer position = w->position;
    if (w->keys == 0) {
        const int nargs = prefix != 0 ? 2 : 1;
        // After a call, DISCARD and MAP (the answer goes into the result) are back at base.
        const int backAtBase = w->action == BK_WALK_DISCARD || w->action == BK_WALK_MAP;
        for (; position <= w->count; position++) {
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
            lua_callk(L, nargs, results, bk_walk_context(base, position), bk_walk_k);
            bk_walk_check_anchors(L, &anchors);
            if (results != 0 && bk_walk_apply(L, w, 0, base + 1)) break;
            if (!backAtBase) lua_settop(L, base);
        }
    } else {
        const int nargs = prefix != 0 ? 3 : 2;
        for (; position <= w->count; position++) {
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
            lua_callk(L, nargs, results, bk_walk_context(base, position), bk_walk_k);
            bk_walk_check_anchors(L, &anchors);
            if (results != 0 && bk_walk_apply(L, w, base + 1, base + 2)) break;
            lua_settop(L, base);
        }
    }
    w->position = position;
    return bk_walk_finish(L, w);
}

void bk_walk_prepare(lua_State *L, const bk_walk *walk) {
    bk_walk_state *s = (bk_walk_state *)lua_newuserdatauv(L, sizeof(bk_walk_state), BK_WALK_ANCHORS);
    memset(s, 0, sizeof *s);
    s->walk = *walk;
}

// Records the slots the walk uses raw (the walk's userdata is on top, at `base`) and anchors
// their tables in its user values.
static void bk_walk_anchor(lua_State *L, bk_walk_state *s, int base) {
    const bk_walk *w = &s->walk;
    int tableResult = w->action == BK_WALK_MAP || w->action == BK_WALK_KEEP || w->action == BK_WALK_DROP;
    int slots[BK_WALK_ANCHORS] = { w->table, w->keys, tableResult ? w->result : 0 };
    s->tag = &bk_walk_tag;
    s->thread = L;
    s->walk.base = base;
    for (int i = 0; i < BK_WALK_ANCHORS; i++) {
        int slot = slots[i];
        if (slot != 0 && lua_type(L, slot) != LUA_TTABLE) bk_walk_changed(L);  // Swift laid out tables
        s->anchors.slots[i] = slot;
        if (slot == 0) continue;
        s->anchors.addresses[i] = lua_topointer(L, slot);
        lua_pushvalue(L, slot);
        lua_setiuservalue(L, base, i + 1);
    }
}

int bk_walk_start(lua_State *L) {
    int base = lua_gettop(L);
    if (lua_type(L, base) != LUA_TUSERDATA || lua_rawlen(L, base) != sizeof(bk_walk_state))
        return luaL_error(L, "bk: walk state missing");
    bk_walk_state *s = (bk_walk_state *)lua_touserdata(L, base);
    // The userdata stays on the stack (anchored, never moved) below everything the walk pushes.
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow");
    bk_walk_anchor(L, s, base);
    bk_walk w = s->walk;
    w.position = 1;
    return bk_walk_loop(L, s, &w);
}

// The synchronous form, for Swift code that needs the walk's results before it returns (the
// workers' pool runs the first elements in the caller to decide whether to go parallel): the same
// loop, from position `first`, inside ONE protected call in a copy of the caller's frame. Its
// actions write into tables only (MAP, KEEP, DROP, DISCARD), so nothing is copied back: the
// caller's slots are never written from this frame. A block that yields gets "attempt to yield
// across a C-call boundary". Upvalue 2: the helper's name, for the walk's errors.
static int bk_walk_driver(lua_State *L) {
    bk_walk *out = (bk_walk *)lua_touserdata(L, -1);
    lua_settop(L, -2);
    bk_walk_prepare(L, out);
    int base = lua_gettop(L);
    bk_walk_state *s = (bk_walk_state *)lua_touserdata(L, base);
    bk_walk_anchor(L, s, base);
    bk_walk w = s->walk;
    w.position = out->first > 1 ? out->first : 1;
    w.returns = 0;
    bk_walk_loop(L, s, &w);
    out->appended = w.appended;
    out->position = w.position;
    return 0;
}

int bk_walk_run(lua_State *L, bk_walk *walk, int handler) {
    int n = lua_gettop(L);
    if (walk->action != BK_WALK_DISCARD && walk->action != BK_WALK_MAP && walk->action != BK_WALK_KEEP &&
        walk->action != BK_WALK_DROP)
        return BK_WALK_NO_STACK;  // a value slot would need copying back (not used by any caller)
    if (!lua_checkstack(L, n + 8)) return BK_WALK_NO_STACK;
    lua_pushnil(L);
    lua_pushvalue(L, lua_upvalueindex(2));  // the running bk function's name (nil outside one)
    lua_pushcclosure(L, bk_walk_driver, 2);
    for (int i = 1; i <= n; i++) lua_pushvalue(L, i);
    lua_pushlightuserdata(L, walk);
    // The caller's own frame is checked too: the block can reach it (a level further up).
    return bk_pcall_guarded(L, n + 1, 0, handler);
}
