// The tasks engine's C helper (TaskEngine.lua gets it as `native.closing`).
#include "CLuaShim.h"

int bk_stateclosing(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    lua_pushboolean(L, rt != NULL && bk_runtime_life(rt) != BK_LIFE_OPEN);
    return 1;
}
