// TEMPORARY stand-in for the lead's hook hub (Hook.c), one state at a time, to develop the debugger
// against hook-hub.md's interface. Removed when Hook.c lands.
#include "CLuaShimHookStub.h"
#include <lauxlib.h>

static bk_hook_fn stub_fn;
static void *stub_context;
static int stub_mask, stub_count;

#define STUB_THREADS 256
static struct { lua_State *L; int mask; } stub_extra[STUB_THREADS];

static int stub_extra_of(lua_State *L) {
    for (int i = 0; i < STUB_THREADS; i++) if (stub_extra[i].L == L) return stub_extra[i].mask;
    return 0;
}

static void stub_hub(lua_State *L, lua_Debug *ar) {
    int bit = ar->event == LUA_HOOKTAILCALL ? LUA_MASKCALL : (1 << ar->event);
    int mask = stub_mask | stub_extra_of(L);
    if (stub_fn != NULL && (mask & bit)) stub_fn(L, ar, stub_context);
}

static void stub_install(lua_State *L) {
    int mask = stub_mask | stub_extra_of(L);
    if (stub_fn == NULL) lua_sethook(L, NULL, 0, 0);
    else lua_sethook(L, stub_hub, mask, stub_count > 0 ? stub_count : 1000);
}

void bk_hook_attach(lua_State *L, int slot, bk_hook_fn fn, void *context, int mask, int count) {
    if (slot != BK_HOOK_DEBUGGER) return;
    stub_fn = fn;
    stub_context = context;
    stub_mask = mask;
    stub_count = count;
    stub_install(L);
}

void bk_hook_detach(lua_State *L, int slot) {
    if (slot != BK_HOOK_DEBUGGER) return;
    stub_fn = NULL;
    for (int i = 0; i < STUB_THREADS; i++) stub_extra[i].L = NULL;
    stub_install(L);
}

void bk_hook_thread_extra(lua_State *L, int mask) {
    int free = -1;
    for (int i = 0; i < STUB_THREADS; i++) {
        if (stub_extra[i].L == L) { stub_extra[i].mask = mask; stub_install(L); return; }
        if (stub_extra[i].L == NULL && free < 0) free = i;
    }
    if (free >= 0) { stub_extra[free].L = L; stub_extra[free].mask = mask; }
    stub_install(L);
}
