// TEMPORARY: the hook hub's interface (hook-hub.md) until the lead's Hook.c lands on main; removed
// at the merge.
#ifndef CLUASHIM_HOOKSTUB_H
#define CLUASHIM_HOOKSTUB_H
#include <lua.h>
typedef void (*bk_hook_fn)(lua_State *L, lua_Debug *ar, void *context);
typedef enum bk_hook_slot { BK_HOOK_PROFILER = 0, BK_HOOK_DEBUGGER = 1, BK_HOOK_SLOTS = 2 } bk_hook_slot;
void bk_hook_attach(lua_State *L, int slot, bk_hook_fn fn, void *context, int mask, int count);
void bk_hook_detach(lua_State *L, int slot);
void bk_hook_thread_extra(lua_State *L, int mask);
#endif
