// Reading Lua 5.4's binary chunks (lua_dump's format, ldump.c) without loading them: the
// debugger's line table (DebuggerLines.c) and the pool's check for blocks that assign to their
// upvalues (DumpWrites.c). Every read is bounded by the dump's end; a malformed or foreign dump
// sets `failed` and reads nothing more. Plain C: nothing here calls Lua.
#ifndef BK_DUMP_H
#define BK_DUMP_H

#include <stddef.h>
#include <lua.h>

typedef struct bk_dump_reader {
    const unsigned char *p, *end;
    int failed;
    int int_size, number_size;
} bk_dump_reader;

// A dump being written (lua_dump's writer bk_dump_buffer_write, `ud` a bk_dump_buffer): malloc'd,
// freed by its owner with free(bytes). Never raises; on a failed allocation `failed` is set.
typedef struct bk_dump_buffer {
    unsigned char *bytes;
    size_t size, capacity;
    int failed;
} bk_dump_buffer;
int bk_dump_buffer_write(lua_State *L, const void *p, size_t size, void *ud);

// Starts a reader past the header (signature, version 5.4, format, LUAC_DATA, sizes, LUAC_INT,
// LUAC_NUM, the main closure's upvalue count); 0 when it is not a 5.4 dump with 4-byte instructions.
int bk_dump_open(bk_dump_reader *r, const unsigned char *bytes, size_t size);
const unsigned char *bk_dump_take(bk_dump_reader *r, size_t n);
size_t bk_dump_size(bk_dump_reader *r);  // 7 bits a byte, most significant first; 0x80 ends
int bk_dump_int(bk_dump_reader *r);
// A string: its bytes (NULL for a NULL string or on failure) and length.
const unsigned char *bk_dump_string(bk_dump_reader *r, size_t *length);
// A vector's length, at most what the rest of the dump can hold at `each` bytes an entry.
int bk_dump_count(bk_dump_reader *r, size_t each);
// A function's constants (their count, then each), skipped.
void bk_dump_skip_constants(bk_dump_reader *r);
// The debug part of a function (line info, locals, upvalue names), skipped.
void bk_dump_skip_debug(bk_dump_reader *r);
// The end of the debug part (locals, upvalue names), skipped.
void bk_dump_skip_names(bk_dump_reader *r);

// When the Lua function at `idx` assigns to one of its upvalues, directly or in a function nested
// in it: 1, with `reason` saying which ("assigns to upvalue 'sum' ..."). 0 otherwise, or when its
// dump cannot be read. Never raises (DumpWrites.c).
int bk_function_assignment(lua_State *L, int idx, char *reason, size_t size);

#endif
