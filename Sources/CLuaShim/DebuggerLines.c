// Where a line breakpoint can stop (bk_debugger_place_lines): the lines that hold code, found as Lua
// finds them. The file is compiled in a scratch state of its own (never the debugged one: the
// transport's thread answers setBreakpoints while the script runs). A chunk's functions are not
// closures until it runs, so lua_getinfo "L" reaches only its main function; the nested ones'
// lines are read from the chunk's dump (lua_dump), whose debug part holds every function's line
// info, decoded as Lua's own collectvalidlines does.
#include "CLuaShim.h"
#include "Dump.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct bk_code_function {  // one function of the chunk: its range and its active lines
    int first, last;               // linedefined, lastlinedefined (0, 0: the main chunk)
    int *lines;                    // sorted, unique
    int count;
} bk_code_function;

typedef struct bk_code {
    bk_code_function *functions;
    int count, capacity;
    int file_lines;  // the file's line count
    bk_dump_buffer dump;  // the chunk's dump (freed by the caller: a raise may skip the reader's end)
} bk_code;

static void bk_code_free(bk_code *code) {
    for (int i = 0; i < code->count; i++) free(code->functions[i].lines);
    free(code->functions);
    free(code->dump.bytes);
}

static int bk_code_int_compare(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int bk_code_add(bk_code *code, int first, int last, int *lines, int count) {
    if (code->count == code->capacity) {
        int capacity = code->capacity ? code->capacity * 2 : 16;
        bk_code_function *grown = realloc(code->functions, sizeof *grown * (size_t)capacity);
        if (grown == NULL) return 0;
        code->functions = grown;
        code->capacity = capacity;
    }
    qsort(lines, (size_t)count, sizeof(int), bk_code_int_compare);
    int unique = 0;
    for (int i = 0; i < count; i++)
        if (unique == 0 || lines[unique - 1] != lines[i]) lines[unique++] = lines[i];
    code->functions[code->count++] = (bk_code_function){ first, last, lines, unique };
    return 1;
}

// MARK: - The dump

static void bk_dump_function(bk_dump_reader *r, bk_code *code, int depth) {
    if (depth > 250) { r->failed = 1; return; }
    size_t length;
    bk_dump_string(r, &length);  // source
    int first = bk_dump_int(r), last = bk_dump_int(r);
    const unsigned char *flags = bk_dump_take(r, 3);  // numparams, is_vararg, maxstacksize
    int vararg = flags != NULL && flags[1] != 0;
    int code_size = bk_dump_count(r, 4);
    bk_dump_take(r, (size_t)code_size * 4);
    bk_dump_skip_constants(r);
    bk_dump_take(r, (size_t)bk_dump_count(r, 3) * 3);  // upvalues: instack, idx, kind
    int protos = bk_dump_count(r, 1);
    for (int i = 0; i < protos && !r->failed; i++) bk_dump_function(r, code, depth + 1);
    int n = bk_dump_count(r, 1);
    const unsigned char *lineinfo = bk_dump_take(r, (size_t)n);
    int absolute = bk_dump_count(r, 2);
    int *abs_pc = absolute > 0 ? malloc(sizeof(int) * (size_t)absolute * 2) : NULL;
    if (absolute > 0 && abs_pc == NULL) r->failed = 1;
    for (int i = 0; i < absolute && !r->failed; i++) {
        abs_pc[2 * i] = bk_dump_int(r);
        abs_pc[2 * i + 1] = bk_dump_int(r);
    }
    bk_dump_skip_names(r);
    int *lines = n > 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (r->failed || (n > 0 && lines == NULL)) {
        r->failed = 1;
        free(abs_pc);
        free(lines);
        return;
    }
    // As ldebug.c's collectvalidlines: a delta per instruction, or ABSLINEINFO (-0x80) where the
    // absolute line list has the instruction's line; a vararg function's first instruction
    // (OP_VARARGPREP) is no line of its own.
    int line = first, count = 0, k = 0;
    for (int pc = 0; pc < n; pc++) {
        signed char delta = (signed char)lineinfo[pc];
        if (delta != -0x80) {
            line += delta;
        } else {
            while (k < absolute && abs_pc[2 * k] < pc) k++;
            if (k < absolute && abs_pc[2 * k] == pc) line = abs_pc[2 * k + 1];
        }
        if (!(vararg && pc == 0)) lines[count++] = line;
    }
    free(abs_pc);
    if (!bk_code_add(code, first, last, lines, count)) {
        free(lines);
        r->failed = 1;
    }
}

// In the scratch state, protected: (bk_code * as a light userdata, the path, the file's text).
static int bk_code_read_protected(lua_State *S) {
    bk_code *code = lua_touserdata(S, 1);
    const char *path = lua_tostring(S, 2);
    size_t size;
    const char *text = lua_tolstring(S, 3, &size);
    // The file's lines, as Lua's lexer counts them: \n, \r, \r\n and \n\r each end one.
    int lines = 0;
    for (size_t i = 0; i < size; i++) {
        if (text[i] != '\n' && text[i] != '\r') continue;
        lines++;
        if (i + 1 < size && (text[i + 1] == '\n' || text[i + 1] == '\r') && text[i + 1] != text[i]) i++;
    }
    if (size > 0 && text[size - 1] != '\n' && text[size - 1] != '\r') lines++;
    code->file_lines = lines;
    // A UTF-8 byte order mark, then a first line starting with '#', are skipped, as luaL_loadfile
    // does (the line's newline kept: the lines keep their numbers).
    luaL_Buffer chunkname;
    luaL_buffinit(S, &chunkname);
    luaL_addchar(&chunkname, '@');
    luaL_addstring(&chunkname, path);
    luaL_pushresult(&chunkname);
    size_t skip = 0;
    if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) skip = 3;
    if (skip < size && text[skip] == '#') {
        while (skip < size && text[skip] != '\n') skip++;
    }
    // Text only: a binary chunk's bytecode is not checked by Lua's loader (a forged one can crash it).
    if (luaL_loadbufferx(S, text + skip, size - skip, lua_tostring(S, -1), "t") != LUA_OK) return 0;
    int main = lua_gettop(S);
    if (lua_dump(S, bk_dump_buffer_write, &code->dump, 0) != 0 || code->dump.failed) return 0;
    bk_dump_reader r;
    if (!bk_dump_open(&r, code->dump.bytes, code->dump.size)) return 0;
    bk_dump_function(&r, code, 0);
    if (r.failed) return 0;
    // The main function's lines as Lua itself gives them (its dump's, checked).
    lua_Debug ar;
    lua_pushvalue(S, main);
    if (code->count > 0 && lua_getinfo(S, ">L", &ar) && lua_istable(S, -1)) {
        bk_code_function *f = &code->functions[code->count - 1];  // dumped last: after its protos
        int n = 0;
        lua_pushnil(S);
        while (lua_next(S, -2)) {
            lua_pop(S, 1);
            if (lua_isinteger(S, -1)) n++;
        }
        int *lines = n > 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
        if (n == 0 || lines != NULL) {
            int i = 0;
            lua_pushnil(S);
            while (lua_next(S, -2)) {
                lua_pop(S, 1);
                if (lua_isinteger(S, -1) && i < n) lines[i++] = (int)lua_tointeger(S, -1);
            }
            qsort(lines, (size_t)i, sizeof(int), bk_code_int_compare);
            free(f->lines);
            f->lines = lines;
            f->count = i;
        }
    }
    lua_pushboolean(S, 1);
    return 1;
}

// MARK: - Placing breakpoints

// The line a breakpoint asked at `line` stops at: itself when some function has code there, else
// the next line with code of the innermost function around it; 0 when that function has none
// after it; -1 past the file's end.
static int bk_code_place(const bk_code *code, int line) {
    if (line > code->file_lines) return -1;
    const bk_code_function *inner = NULL;
    for (int i = 0; i < code->count; i++) {
        const bk_code_function *f = &code->functions[i];
        if (bsearch(&line, f->lines, (size_t)f->count, sizeof(int), bk_code_int_compare) != NULL) return line;
        int around = f->first == 0 || (f->first <= line && line <= f->last);
        if (around && (inner == NULL || inner->first == 0 || (f->first != 0 && f->last - f->first < inner->last - inner->first)))
            inner = f;
    }
    if (inner == NULL) return 0;
    for (int i = 0; i < inner->count; i++)
        if (inner->lines[i] > line) return inner->lines[i];
    return 0;
}

// The biggest file placed by (bigger ones keep the lines asked).
#define BK_DEBUG_PLACE_MAX_BYTES (64 << 20)

int bk_debugger_place_lines(const char *path, const int *asked, int count, int *placed) {
    // A regular file only: opening a FIFO (or a device) would block the transport's thread.
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat info;
    if (fd < 0) return 0;
    // Nor a file bigger than any script (a sparse file of gigabytes was read up to a cap meanwhile).
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > BK_DEBUG_PLACE_MAX_BYTES) {
        close(fd);
        return 0;
    }
    FILE *file = fdopen(fd, "rb");
    if (file == NULL) {
        close(fd);
        return 0;
    }
    char *text = NULL;
    size_t size = 0, capacity = 0;
    for (;;) {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 65536;
            if (capacity > (size_t)BK_DEBUG_PLACE_MAX_BYTES * 2) break;  // it grew since fstat
            char *grown = realloc(text, capacity);
            if (grown == NULL) break;
            text = grown;
        }
        size_t got = fread(text + size, 1, capacity - size, file);
        size += got;
        if (got == 0) break;
    }
    int complete = feof(file) && !ferror(file);
    fclose(file);
    lua_State *S = complete ? luaL_newstate() : NULL;
    int ok = 0;
    bk_code code = { 0 };
    if (S != NULL) {
        lua_pushcfunction(S, bk_code_read_protected);
        lua_pushlightuserdata(S, &code);
        lua_pushstring(S, path);
        lua_pushlstring(S, text != NULL ? text : "", size);
        ok = lua_pcall(S, 3, 1, 0) == LUA_OK && lua_toboolean(S, -1);
        lua_close(S);
    }
    free(text);
    if (ok) {
        for (int i = 0; i < count; i++) placed[i] = bk_code_place(&code, asked[i]);
    }
    bk_code_free(&code);
    return ok;
}
