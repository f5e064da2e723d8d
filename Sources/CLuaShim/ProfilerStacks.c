// The profiler's stack collection: one Lua thread's call stack as a folded line (root first, ';'
// between frames), read inside a hook or right after an exported function returned. Reads only:
// lua_getstack and lua_getinfo ("Sn", "f" for C functions), no allocation, no metamethod, no raise.
#include "CLuaShim.h"
#include <string.h>
#include <stdio.h>

// Frames kept per sample: the innermost ones. A deeper stack (10,000 recursive calls) keeps these
// under a "..." frame: the walk is linear in the frames kept (lua_getstack walks from the top), so
// a sample costs the same at any depth.
#define BK_PROFILE_FRAMES 96
#define BK_PROFILE_FRAME_BYTES 128

// The bridge's own Lua: its files (=bk/Name.lua) and inline chunks (=[bk ...]).
static int bk_is_bridge_source(const char *source) {
    return strncmp(source, "=bk/", 4) == 0 || strncmp(source, "=[bk ", 5) == 0;
}

// The file name a source names: the last component of "@path", the text of "=name", else
// short_src ("[string "..."]").
static const char *bk_frame_file(const lua_Debug *ar) {
    if (ar->source[0] == '@') {
        const char *slash = strrchr(ar->source, '/');
        return slash != NULL ? slash + 1 : ar->source + 1;
    }
    if (ar->source[0] == '=') return ar->source + 1;
    return ar->short_src;
}

// Folded-stack text may not hold ';' (the frame separator) nor line breaks, and no control
// character at all (a name is any string: `t["step\1one"]`): XML (the SVG) forbids them, and some
// readers split lines at \v or \f.
static void bk_frame_clean(char *s) {
    for (; *s != '\0'; s++) {
        if (*s == ';') *s = ':';
        else if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
    }
}

// The name an exported Swift function was exported under (its closure's second upvalue), with the
// class of its `self` when it is called as a method (`Gadget:resize`). The function is on top.
static void bk_swift_frame(lua_State *L, lua_Debug *ar, char *out, size_t size) {
    int pushed = 0;
    const char *name = NULL, *class = NULL;
    if (lua_getupvalue(L, -1, 2) != NULL) {
        pushed++;
        if (lua_type(L, -1) == LUA_TSTRING) name = lua_tostring(L, -1);  // no conversion: no allocation
    }
    if (name == NULL) name = ar->name != NULL ? ar->name : "?";
    if (ar->namewhat != NULL && strcmp(ar->namewhat, "method") == 0 && lua_getlocal(L, ar, 1) != NULL) {
        pushed++;
        // The metatable's __name, read raw (no metamethod runs).
        int type = luaL_getmetafield(L, -1, "__name");
        if (type != LUA_TNIL) pushed++;
        if (type == LUA_TSTRING) class = lua_tostring(L, -1);
    }
    if (class != NULL) snprintf(out, size, "[Swift] %s:%s", class, name);
    else snprintf(out, size, "[Swift] %s", name);
    bk_frame_clean(out);
    lua_pop(L, pushed);
}

// One frame's text into `out`; returns 0 for frames left out (the bridge's own Lua, bk/...).
static int bk_frame_name(lua_State *L, lua_Debug *ar, int caller_is_bridge, char *out, size_t size) {
    if (ar->what[0] == 'C') {
        int swift = 0;
        if (lua_checkstack(L, 4) && lua_getinfo(L, "f", ar)) {
            swift = lua_tocfunction(L, -1) == bk_trampoline;
            if (swift) bk_swift_frame(L, ar, out, size);
            lua_pop(L, 1);
        }
        if (!swift) snprintf(out, size, "[C] %s", ar->name != NULL ? ar->name : "?");
        return 1;
    }
    if (bk_is_bridge_source(ar->source)) return 0;
    const char *file = bk_frame_file(ar);
    if (ar->what[0] == 'm') snprintf(out, size, "%s (main chunk)", file);
    // A name comes from the calling instruction: the bridge's own Lua names its locals, not the
    // script's functions, so a function it called is named by its place alone.
    else if (ar->name != NULL && !caller_is_bridge) snprintf(out, size, "%s:%d (%s)", file, ar->linedefined, ar->name);
    else snprintf(out, size, "%s:%d", file, ar->linedefined);
    bk_frame_clean(out);
    return 1;
}

size_t bk_profile_collect(lua_State *L, const char *label, char *buffer, size_t size) {
    char frames[BK_PROFILE_FRAMES][BK_PROFILE_FRAME_BYTES];
    int kept = 0, lua_frames = 0, truncated = 0;
    int outermost_lua = -1;  // index in frames of the outermost Lua frame kept
    lua_Debug ar, next;
    int level = 0;
    int have = lua_getstack(L, 0, &ar);
    if (have) lua_getinfo(L, "Sn", &ar);
    while (have) {
        // The caller decides whether this frame's name can be trusted.
        int has_caller = lua_getstack(L, level + 1, &next);
        if (has_caller) lua_getinfo(L, "Sn", &next);
        int caller_is_bridge = has_caller && bk_is_bridge_source(next.source);
        if (kept == BK_PROFILE_FRAMES) {
            truncated = 1;
            break;
        }
        if (bk_frame_name(L, &ar, caller_is_bridge, frames[kept], BK_PROFILE_FRAME_BYTES)) {
            if (ar.what[0] != 'C') {
                lua_frames++;
                outermost_lua = kept;
            }
            kept++;
        }
        ar = next;
        level++;
        have = has_caller;
    }
    if (lua_frames == 0) return 0;
    // What called the outermost Lua code from the host (bklua's pmain, a host's Swift function
    // running a script) says nothing about the script: the stack starts at its Lua.
    if (!truncated) kept = outermost_lua + 1;

    // The root: the state's label, then for a coroutine what runs it (a bk task, or a coroutine of
    // the script's own), named by its outermost function.
    char root[2 * BK_PROFILE_FRAME_BYTES];
    int main_thread = lua_pushthread(L);
    lua_pop(L, 1);
    const char *base = label != NULL && label[0] != '\0' ? label : NULL;
    const char *kind = NULL;
    if (!main_thread && !truncated) {
        if (bk_thread_is_task(L, L)) kind = "task";
        else if (lua_isyieldable(L)) kind = "coroutine";  // not the loop's threads (called, not resumed)
    }
    if (kind == NULL)
        snprintf(root, sizeof root, "%s", base != NULL ? base : "main");
    else
        snprintf(root, sizeof root, "%s%s%s %s", base != NULL ? base : "", base != NULL ? ";" : "", kind, frames[kept - 1]);

    size_t length = 0;
    int written = snprintf(buffer, size, "%s%s", root, truncated ? ";..." : "");
    if (written < 0 || (size_t)written >= size) return 0;
    length = (size_t)written;
    for (int i = kept - 1; i >= 0; i--) {
        written = snprintf(buffer + length, size - length, ";%s", frames[i]);
        if (written < 0 || (size_t)written >= size - length) break;  // full: the outer frames stay
        length += (size_t)written;
    }
    return length;
}
