// A C target of its own: the bare states use Lua's C API directly, which Swift code outside the
// bridge's Lua plumbing does not (DEVELOPERS.md rule 1).
#include "BenchFloor.h"
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <time.h>

static void bench_floor_empty_hook(lua_State *L, lua_Debug *ar) {
    (void)L;
    (void)ar;
}

void *bench_floor_state(const char *script, int hooked) {
    lua_State *L = luaL_newstate();
    if (L == NULL) return NULL;
    luaL_openlibs(L);
    if (luaL_loadstring(L, script) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
        lua_close(L);
        return NULL;
    }
    if (hooked) lua_sethook(L, bench_floor_empty_hook, LUA_MASKCALL, 0);
    return L;
}

double bench_floor_run(void *state, const char *function, int times) {
    lua_State *L = state;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < times; i++) {
        lua_getglobal(L, function);
        if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
            lua_pop(L, 1);
            return -1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    return (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
}
