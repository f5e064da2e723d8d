// The debugger's hook client (Debugger.c): breakpoints, stepping and pause, checked in C on the
// hook hub's events; a stop calls the debugger's agent (Debugger/DebugAgent.lua) in a protected
// call, which talks to the Swift session (Debugger/) and blocks there until the client resumes.
#ifndef CLUASHIM_DEBUGGER_H
#define CLUASHIM_DEBUGGER_H

#include <lua.h>

typedef struct bk_debugger bk_debugger;

/// Step modes: what the next stop waits for on the thread that stopped.
typedef enum bk_step { BK_STEP_NONE = 0, BK_STEP_IN = 1, BK_STEP_OVER = 2, BK_STEP_OUT = 3 } bk_step;

/// Exception breakpoint filters (bk_debugger_set_exceptions).
#define BK_DEBUG_UNCAUGHT 1
#define BK_DEBUG_ALL 2

// From any thread (the transport's): these never touch a Lua state.
bk_debugger *bk_debugger_create(void);
/// Frees it; the state must be detached (bk_debugger_detach) first.
void bk_debugger_destroy(bk_debugger *d);
/// Replaces the line breakpoints of the file `path` (absolute; normalized here) with `lines`.
void bk_debugger_set_lines(bk_debugger *d, const char *path, const int *lines, int count);
/// Replaces the function breakpoints: `names` holds `count` NUL-terminated names one after another.
void bk_debugger_set_functions(bk_debugger *d, const char *names, int count);
void bk_debugger_set_exceptions(bk_debugger *d, int filters);
int bk_debugger_exceptions(bk_debugger *d);
/// Sets in `dst` the breakpoints and exception filters of `src` (a worker state's client joining).
void bk_debugger_copy_breakpoints(bk_debugger *dst, bk_debugger *src);
/// Asks the running script to stop at its next instruction (count events, so an endless loop too).
void bk_debugger_pause(bk_debugger *d);
/// A pause asked while stopped: ends the evaluation running then (an endless watch or console
/// line), as its 5 s limit would; nothing when none runs.
void bk_debugger_interrupt_evaluation(bk_debugger *d);
/// Clears breakpoints, exception filters and steps (the client left): the script runs on.
void bk_debugger_release_script(bk_debugger *d);
/// The absolute, normalized path of a file name (realpath, else joined to the working directory),
/// malloc'd, or NULL; what breakpoints and stack traces use for a chunk "@name".
char *bk_debugger_normalize_path(const char *name);
/// Where line breakpoints asked at `asked` can stop in the file `path` (DebuggerLines.c): for each,
/// in `placed`, the line itself when a function has code there, else the next line with code of
/// the innermost function around it, 0 when it has none after, -1 past the file's end. Returns 0
/// (nothing placed) when the file cannot be read or compiled. Any thread: a scratch state of its own.
int bk_debugger_place_lines(const char *path, const int *asked, int count, int *placed);
/// Sets the agent's natives for a table's keys (DebuggerKeys.c) in the table on top.
void bk_debugger_push_key_natives(lua_State *L);
/// Flushes C's stdout and stderr; `unbuffered`: stdout writes at once from now on (bklua --dap,
/// where it is a pipe to the client's output events).
void bk_debugger_stdio(int unbuffered);
/// glibc's on_exit: `handler` runs at exit() with its status (os.exit under bklua --dap).
int bk_debugger_on_exit(void (*handler)(int status, void *argument), void *argument);

// On the thread running the state.
/// Attaches `d` to L's state: the agent function is on top of the stack (popped, kept in the
/// registry). `stopOnEntry`: the first line run stops with reason "entry".
void bk_debugger_attach(lua_State *L, bk_debugger *d, int stopOnEntry);
void bk_debugger_detach(lua_State *L, bk_debugger *d);
/// The attached state is closing (any thread, no Lua call): once this returns, no poke from the
/// transport's thread (new breakpoints, a pause) reaches its runtime.
void bk_debugger_forget_state(bk_debugger *d);
/// Pushes the agent's C natives, a table { step, path, evaluating, sources, taskFailed,
/// frozenContents, taskObserverKey, debug = a private debug library },
/// in a protected call: returns its status (the error on top when not LUA_OK).
int bk_debugger_pushnatives(lua_State *L, bk_debugger *d);
/// Called where an error is raised (a message handler): stops with reason "exception" when the
/// filters ask for it (`uncaught`: the handler is the top level's). Leaves the stack as it was.
void bk_debugger_exception(lua_State *L, int uncaught);
/// Whether `f` is one of the debugger's own pcall and xpcall (the `all` filter's, which skip a
/// message handler once a limit has tripped themselves): the limits' guard leaves them in place.
int bk_debugger_owns_protected_call(lua_CFunction f);
/// Whether the values at `a` and `b` are one error (raw equality, NaN counting as itself).
int bk_debugger_same_error(lua_State *L, int a, int b);
/// L is about to resume a coroutine of the script's (coroutine.resume, coroutine.wrap) or to close
/// it (its `__close` handlers run there): a stepIn of L's goes on in it, so it stops at the
/// coroutine's next line; a step to the next line anywhere gets co's line events.
void bk_debugger_resume_starting(lua_State *L, lua_State *co, void *context);
/// A coroutine of the script's (coroutine.resume, coroutine.wrap) gave control back to L, having
/// returned, yielded or raised (`status`, lua_resume's): a step bound to it goes on in L, and an
/// error it raised (moved to L's top already: the stop may close or resume co) stops under the
/// `all` filter. `context`: the debugger's hook client's.
void bk_debugger_resume_ended(lua_State *L, lua_State *co, int status, void *context);
/// L closed a coroutine of the script's (coroutine.close, or a coroutine.wrap function closing the
/// one that raised), whose pending `__close` handlers ran there: a step bound to it goes on in L.
void bk_debugger_coroutine_closed(lua_State *L, lua_State *co, void *context);
/// The bridge reports an error it handled (the loop goes on): it is done with, and the same value
/// raised again later is a new error, which the debugger stops on again.
void bk_debugger_error_reported(lua_State *L);
/// The error `from` died of left it: returned by coroutine.resume (`raised` 0: handled), or raised
/// again in L by coroutine.wrap (`raised` 1: the value on L's top, which the debugger stopped on
/// already if it stopped on the coroutine's). Raises only a memory error.
void bk_debugger_error_moved(lua_State *L, lua_State *from, int raised);
/// Pushes the attached debugger's watcher of tasks (the agent's onTask; the tasks engine calls it
/// as tasks start, fail and end), or nil when no debugger is attached. Never raises.
void bk_debugger_push_task_observer(lua_State *L);

#endif
