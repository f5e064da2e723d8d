// Reading Lua 5.4's binary chunks (Dump.h). Plain C over a byte range: no Lua call; the
// reader allocates nothing (the buffer's writer does).
#include "Dump.h"
#include "CLuaShim.h"
#include <stdlib.h>
#include <string.h>

int bk_dump_buffer_write(lua_State *L, const void *p, size_t size, void *ud) {
    (void)L;
    bk_dump_buffer *b = ud;
    if (b->size + size > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (capacity < b->size + size) capacity *= 2;
        unsigned char *grown = realloc(b->bytes, capacity);
        if (grown == NULL) return b->failed = 1;
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->size, p, size);
    b->size += size;
    return 0;
}

int bk_dump_open(bk_dump_reader *r, const unsigned char *bytes, size_t size) {
    *r = (bk_dump_reader){ bytes, bytes + size, 0, 0, 0 };
    const unsigned char *header = bk_dump_take(r, 15);
    if (header == NULL || memcmp(header, LUA_SIGNATURE, 4) != 0 || header[4] != 0x54 || header[12] != 4) return 0;
    r->int_size = header[13];
    r->number_size = header[14];
    bk_dump_take(r, (size_t)r->int_size + (size_t)r->number_size + 1);
    return !r->failed;
}

const unsigned char *bk_dump_take(bk_dump_reader *r, size_t n) {
    if (r->failed || (size_t)(r->end - r->p) < n) {
        r->failed = 1;
        return NULL;
    }
    const unsigned char *at = r->p;
    r->p += n;
    return at;
}

size_t bk_dump_size(bk_dump_reader *r) {
    size_t x = 0;
    for (int i = 0; i < 10; i++) {
        const unsigned char *b = bk_dump_take(r, 1);
        if (b == NULL) return 0;
        x = (x << 7) | (*b & 0x7f);
        if (*b & 0x80) return x;
    }
    r->failed = 1;
    return 0;
}

int bk_dump_int(bk_dump_reader *r) {
    size_t x = bk_dump_size(r);
    if (x > 0x7fffffff) r->failed = 1;
    return (int)x;
}

const unsigned char *bk_dump_string(bk_dump_reader *r, size_t *length) {
    size_t size = bk_dump_size(r);  // the length plus one; 0 for a NULL string
    *length = size > 0 ? size - 1 : 0;
    return size > 0 ? bk_dump_take(r, size - 1) : NULL;
}

int bk_dump_count(bk_dump_reader *r, size_t each) {
    size_t n = bk_dump_size(r);
    if (r->failed || n > (size_t)(r->end - r->p) / (each ? each : 1)) {
        r->failed = 1;
        return 0;
    }
    return (int)n;
}

void bk_dump_skip_constants(bk_dump_reader *r) {
    int count = bk_dump_count(r, 1);
    size_t length;
    for (int i = 0; i < count && !r->failed; i++) {
        const unsigned char *tag = bk_dump_take(r, 1);
        if (tag == NULL) break;
        switch (*tag) {
        case 3: bk_dump_take(r, (size_t)r->int_size); break;      // LUA_VNUMINT
        case 19: bk_dump_take(r, (size_t)r->number_size); break;  // LUA_VNUMFLT
        case 4: case 20: bk_dump_string(r, &length); break;      // short and long strings
        default: break;                                           // nil, false, true
        }
    }
}

void bk_dump_skip_debug(bk_dump_reader *r) {
    bk_dump_take(r, (size_t)bk_dump_count(r, 1));  // line info
    int absolute = bk_dump_count(r, 2);
    for (int i = 0; i < absolute && !r->failed; i++) {
        bk_dump_int(r);
        bk_dump_int(r);
    }
    bk_dump_skip_names(r);
}

void bk_dump_skip_names(bk_dump_reader *r) {
    int locals = bk_dump_count(r, 3);
    size_t length;
    for (int i = 0; i < locals && !r->failed; i++) {
        bk_dump_string(r, &length);
        bk_dump_size(r);
        bk_dump_size(r);
    }
    int names = bk_dump_count(r, 1);
    for (int i = 0; i < names && !r->failed; i++) bk_dump_string(r, &length);
}
