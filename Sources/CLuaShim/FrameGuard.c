// Calls from a C or Swift frame that goes on using its own stack slots afterwards. A callback can
// rewrite any slot of such a frame (debug.setlocal reaches a C function's temporaries), after
// which a raw table operation on a slot that held a table is a crash. bk_pcall_guarded records
// each slot below the function (type and address) before the call and compares after: when one
// differs, the results (or the error) are dropped and a clear error takes their place, so the
// caller never uses a rewritten slot raw. A table replaced by another table is caught too, by its
// address; should an unanchored original have been freed and its address reused by the new table,
// the slot still holds a table, which is all the raw operations need.
#include "CLuaShim.h"
#include <stdlib.h>

typedef struct bk_slot_record {
    int type;
    const void *address;
} bk_slot_record;

#define BK_GUARD_ON_STACK 32

const char *bk_pushframechanged(lua_State *L) {
    const char *fname = lua_tostring(L, lua_upvalueindex(2));  // a bk function's name (trampoline)
    if (fname != NULL)
        return lua_pushfstring(L, "bk: %s's frame was changed while its block ran (debug.setlocal)", fname);
    return lua_pushliteral(L, "bk: a bk function's frame was changed while a callback ran (debug.setlocal)");
}

int bk_pcall_guarded(lua_State *L, int nargs, int nresults, int msgh) {
    int frame = lua_gettop(L) - nargs - 1;  // the caller's slots, below the function
    bk_slot_record onStack[BK_GUARD_ON_STACK];
    bk_slot_record *records = onStack;
    if (frame > BK_GUARD_ON_STACK) {
        records = (bk_slot_record *)malloc((size_t)frame * sizeof *records);
        if (records == NULL) {  // not checkable: refuse the call rather than trust the frame after it
            lua_settop(L, frame);
            lua_pushliteral(L, "not enough memory");
            return LUA_ERRMEM;
        }
    }
    for (int i = 1; i <= frame; i++) {
        records[i - 1].type = lua_type(L, i);
        records[i - 1].address = lua_topointer(L, i);
    }
    int status = bk_pcall(L, nargs, nresults, msgh);
    int changed = 0;
    for (int i = 1; i <= frame && !changed; i++)
        changed = lua_type(L, i) != records[i - 1].type || lua_topointer(L, i) != records[i - 1].address;
    if (records != onStack) free(records);
    if (!changed) return status;
    lua_settop(L, frame);
    bk_pushframechanged(L);
    return LUA_ERRRUN;
}
