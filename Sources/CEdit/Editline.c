// Loads libedit at the first prompt (see Editline.h): no Lua and no terminal work here.
#include "Editline.h"

#include <dlfcn.h>
#include <string.h>

editline_api editline;

/// The library's SONAME (Debian's libedit2, which libedit-dev depends on).
static const char library[] = "libedit.so.2";

int editline_load(char *error, size_t error_size) {
    static int result = 1;  // 1: not tried yet
    static char reason[256];
    if (result == 1) {
        result = 0;
        void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (handle == NULL) {
            snprintf(reason, sizeof reason, "%s", dlerror());
            result = -1;
        }
#define EDITLINE_RESOLVE(name) \
        if (result == 0 && (editline.name = (__typeof__(name) *)dlsym(handle, #name)) == NULL) { \
            snprintf(reason, sizeof reason, "%s has no %s", library, #name); \
            result = -1; \
        }
        EDITLINE_NAMES(EDITLINE_RESOLVE)
#undef EDITLINE_RESOLVE
    }
    if (result != 0 && error_size > 0) snprintf(error, error_size, "%s", reason);
    return result;
}
