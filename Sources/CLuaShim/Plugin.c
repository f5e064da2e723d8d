// bk_plugin_symbol: libraries of the bridge loaded on first use, so that what they link (Foundation
// for libbkxml.so) is not loaded at every start. No Lua here.
#define _GNU_SOURCE  // dladdr
#include "CLuaShimPlugin.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void *bk_plugin_symbol(const char *library, const char *symbol, char *error, size_t error_size) {
    void *found = dlsym(RTLD_DEFAULT, symbol);
    if (found != NULL) return found;
    char path[4096];
    Dl_info info;
    const char *tried = library;
    if (dladdr((void *)bk_plugin_symbol, &info) != 0 && info.dli_fname != NULL) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash != NULL && (size_t)(slash - info.dli_fname) + strlen(library) + 2 < sizeof path) {
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, library);
            void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
            if (handle != NULL && (found = dlsym(handle, symbol)) != NULL) return found;
            tried = path;
        }
    }
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle != NULL && (found = dlsym(handle, symbol)) != NULL) return found;
    const char *reason = dlerror();
    snprintf(error, error_size, "%s not found (%s; %s)", library, tried, reason ? reason : "no such symbol");
    return NULL;
}

void *bk_plugin_symbol_at(const char *path, const char *symbol, char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    if (access(path, F_OK) != 0) return NULL;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    void *found = handle != NULL ? dlsym(handle, symbol) : NULL;
    if (found != NULL) return found;
    const char *reason = dlerror();
    snprintf(error, error_size, "%s: %s", path, reason ? reason : "no such symbol");
    return NULL;
}
