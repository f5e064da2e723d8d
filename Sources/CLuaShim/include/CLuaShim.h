// The C side of the Lua/Swift boundary.
//
// Two jobs:
//  1. Lua's macros that Swift cannot import, as small inline functions (bk_pop, bk_newtable, ...).
//  2. The rule that no Lua error ever longjmps through a Swift frame (Boundary.c):
//     - Swift functions exported to Lua run behind `bk_trampoline`, a C function that calls the
//       Swift body, and raises (lua_error) only after the Swift frame has returned, from the status
//       the body returned.
//     - Swift enters Lua only through `bk_pcall` (a protected call).
//     - Allocations made while a Swift frame is live never fail (see bk_runtime): a memory cap is
//       enforced once control is back in Lua, and an emergency reserve is given back when the
//       system itself is out of memory, so an out-of-memory error cannot start inside Swift.
// The files: Boundary.c (allocator, trampoline, protected calls, error values), Walk.c (the
// collections' walk driver), Transfer.c (copies between states), Hook.c (the one hook of a state:
// limits, profiler, debugger, a script's debug.sethook), Limits.c (sandbox limits),
// ModuleEntry.c (bk.so's luaopen_bk), Globals.c (the bk_NAME globals), Console.c (panic, warnings,
// stdio), Loop.c (the event loop's system calls).
#ifndef CLUASHIM_H
#define CLUASHIM_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stddef.h>
#include "CLuaShimLoop.h"  // the event loop's system calls
#include "CLuaShimPlugin.h"  // libraries loaded at first use (libbkxml.so)
#include "CLuaShimTraceback.h"  // bk_luatraceback
#include "CLuaShimDebugger.h"  // the debugger's hook client
#include "CLuaShimProfiler.h"  // the sampling profiler

// MARK: - Per-state runtime data shared by C and Swift

/// A hook client of the hub (Hook.c): called on the thread where the event happens, with hooks off
/// (as any Lua hook), for the events it asked for. A Swift client never raises; to call Lua
/// (conditions, evaluate) it uses protected calls (bk_pcall).
typedef void (*bk_hook_fn)(lua_State *L, lua_Debug *ar, void *context);

typedef enum bk_hook_slot { BK_HOOK_PROFILER = 0, BK_HOOK_DEBUGGER = 1, BK_HOOK_SLOTS = 2 } bk_hook_slot;

typedef struct bk_hook_client {
    bk_hook_fn fn;   // NULL: the slot is free
    void *context;
    int mask;        // LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, on every thread
    int count;       // count events at least every `count` instructions (with LUA_MASKCOUNT)
} bk_hook_client;

typedef struct bk_runtime {
    void *swift_state;     // unretained pointer to the Swift `LuaState`
    size_t bytes_in_use;   // bytes allocated by Lua through bk_alloc
    size_t memory_limit;   // 0: no cap
    int swift_depth;       // > 0 while a Swift frame is live (allocations must not fail then);
                           // 1 while the host runs (the state is created so), 0 inside bk_pcall
    int uses_bk_alloc;     // this state allocates through bk_alloc (the cap applies)
    volatile int interrupted; // set asynchronously (signal); checked by the count hook
    // Sandbox limits (Limits.c), checked by a count hook every few hundred instructions.
    long long instruction_limit;  // 0: none
    long long instructions_used;  // since the last bk_reset_limits
    double time_limit;            // seconds of wall-clock time per run; 0: none
    double deadline;              // monotonic seconds; 0: none
    const char *tripped;          // the limit that stopped the script (sticky until reset), or NULL
    int pcall_depth;              // protected calls from Swift into Lua currently running
    int life;                     // bk_life: read and changed only through bk_runtime_life and
                                  // bk_runtime_advance_life (atomics: the loop reads it on any thread)
    int safe_libraries;           // opened with bk_opensafelibs (its workers get the same set)
    int known_values_changed;     // bk's functions were replaced (the tasks engine loaded): the
                                  // transfer's well-known values are looked up again (Transfer.c)
    int default_reports;          // errors the default reporter wrote to stderr (bklua's exit status)
    int gc_owed_kb;               // allocated while a copy stopped the collector (Transfer.c):
                                  // the step bk_gc_settle takes once the caller's locks are free
    // Allocation (Boundary.c).
    lua_Alloc base_alloc;         // an adopted state's own allocator (bk.so), or NULL: realloc/free
    void *base_ud;
    void *reserve;                // emergency reserve, freed when an allocation inside Swift fails
    int reserve_spent;            // the reserve was used: the trampoline raises "not enough memory"
    bk_runtime_profiling profiling;  // the sampling profiler (ProfilerSampler.c)
    // The hook hub (Hook.c).
    int limits_hooked;            // the limits' count events are wanted (a sandbox, a limit, an
                                  // interrupt asked for); atomic: set from other threads
    int hook_poked;               // atomic: one count event for every client is due (bk_hook_poke)
    int script_hooks;             // a script ever called debug.sethook (records are looked up)
    unsigned long os_thread;      // atomic: the pthread running this state's Lua now, or 0
    int hook_restarts;            // count hooks restarted since the last count event (Hook.c)
    bk_hook_client hook_clients[BK_HOOK_SLOTS];
    int debugger_stopped;         // a debugger's stop is being served on this state's thread:
                                  // its evaluations must not run the loop (Debugger.c)
    int evaluation_tripped;       // the debugger's evaluation ran out: every instruction raises,
                                  // in each thread that runs, until it ends (Debugger.c)
} bk_runtime;

/// The life of a state, one state machine (Swift's `LuaStateLife` names it): open, then closing
/// (the host's close or os.exit(_, true) began: exported functions refuse, except finalizers, and
/// the loop schedules nothing), then closed (the Swift `LuaState` is gone: `swift_state` is NULL).
/// It lives here, not in Swift, because the trampoline and os.exit's wrapper must read and change
/// it in C without a Swift call; Swift reads and changes it only through these two functions.
typedef enum bk_life { BK_LIFE_OPEN = 0, BK_LIFE_CLOSING = 1, BK_LIFE_CLOSED = 2 } bk_life;

static inline int bk_runtime_life(const bk_runtime *rt) {
    return __atomic_load_n(&rt->life, __ATOMIC_ACQUIRE);
}

/// Moves the life forward to `life` (never back: a later, smaller value is ignored).
static inline void bk_runtime_advance_life(bk_runtime *rt, int life) {
    int now = __atomic_load_n(&rt->life, __ATOMIC_RELAXED);
    while (now < life && !__atomic_compare_exchange_n(&rt->life, &now, life, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
}

/// Initialises a runtime (zeroed, with its emergency reserve) / frees what it holds.
void bk_runtime_init(bk_runtime *rt);
void bk_runtime_destroy(bk_runtime *rt);

/// The allocator of bridge states: counts bytes and enforces `memory_limit`, except while Swift
/// code runs (then it over-commits, falls back on the reserve, and the trampoline raises afterwards).
void *bk_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/// Puts bk_alloc in front of the allocator of a state the bridge did not create (stock lua5.4
/// loading bk.so), so the same rule holds there. Does nothing when it is there already.
void bk_adopt_allocator(lua_State *L, bk_runtime *rt);

/// The runtime of the state `L` belongs to, when it allocates through bk_alloc; else NULL.
bk_runtime *bk_runtime_of(lua_State *L);

// MARK: - Status codes a Swift body returns to the trampoline

/// What a Swift body returns to the trampoline: >= 0 is the number of results on the stack; the
/// negative values are these, named here only (Swift's `TrampolineStatus` is built on them).
typedef enum bk_status {
    BK_RAISE_VALUE = -1,     /* raise the value on top of the stack as is */
    BK_RAISE_MESSAGE = -2,   /* string on top: raise it with the caller's position prefixed */
    BK_RAISE_ARGUMENT = -3,  /* stack: ..., arg index, extra message: luaL_argerror wording */
    BK_RAISE_TYPE = -4,      /* stack: ..., top before, arg index, expected type: luaL_typeerror wording */
    /// Run the walk laid out by bk_walk_prepare once the Swift frame is gone: a C driver reads each
    /// element raw when its turn comes, calls the block with lua_callk (so the block may yield when
    /// the caller can) and applies `action` with raw operations; a block's error unwinds C frames
    /// only. Walk rules as `LuaCollection`'s: a list stops at its first nil position (elements past
    /// the starting `#c` are not visited); dictionaries visit the recorded keys whose value is still
    /// non-nil. Then the helper returns `returns`.
    BK_CONTINUE_WALK = -5,
    /// Call a Lua function once the Swift frame is gone and return all its results as the exported
    /// function's own: the stack ends with the function, its arguments, then the argument count (an
    /// integer). The call is made with lua_callk, so the function may yield when the caller can (how
    /// a bk function waits in a task: it hands over to `TaskEngine.lua`), and its error unwinds C
    /// frames only.
    BK_CONTINUE_CALL = -6,
} bk_status;

/// Implemented in Swift: runs the body of an exported function. `body` is the retained Swift box.
extern int bk_swift_call(lua_State *L, void *body, bk_runtime *rt);
/// Implemented in Swift: releases the Swift box when Lua collects the function.
extern void bk_swift_release(void *body);

/// The lua_CFunction behind every exported Swift function.
int bk_trampoline(lua_State *L);

/// The function may run while the state closes (the `__gc` of bridged objects); every other one
/// raises "cannot call 'name' while the Lua state is closing" then.
#define BK_FUNCTION_AT_CLOSE 1

/// Pushes a Lua function whose body is the Swift box `body` (already retained; released by __gc).
/// `name` is used in argument error messages ("bad argument #2 to 'name' ..."); `flags`: BK_FUNCTION_*.
void bk_pushswiftfunction(lua_State *L, bk_runtime *rt, void *body, const char *name, int flags);

/// Protected call that keeps the allocation rule: Lua code called from Swift may fail to allocate.
int bk_pcall(lua_State *L, int nargs, int nresults, int msgh);

/// What a block walk does with each answer of the block.
#define BK_WALK_DISCARD 0  /* each: nothing (no result kept) */
#define BK_WALK_FOLD 1     /* reduce: the answer replaces `prefix` (the accumulator) */
#define BK_WALK_MAP 2      /* map: lists append the answer to `result`, dictionaries set result[key]; nil becomes `null` */
#define BK_WALK_KEEP 3     /* select: a truthy answer keeps the element in `result` (appended, or result[key] = value) */
#define BK_WALK_DROP 4     /* reject: a falsy answer keeps it */
#define BK_WALK_FIND 5     /* match: a truthy answer stores the element's value in `result` (a slot) and stops */
#define BK_WALK_STOP_IF_TRUE 6   /* any / none: a truthy answer negates the boolean in `result` (a slot) and stops */
#define BK_WALK_STOP_IF_FALSE 7  /* all: a falsy answer negates the boolean in `result` (a slot) and stops */
#define BK_WALK_FOLD_INTEGER 8   /* reduceInteger: as FOLD; the answer must convert to an integer (else argument #3 error) */
#define BK_WALK_FOLD_FLOAT 9     /* reduceFloat: as FOLD; the answer must convert to a number, stored as a float */

/// A walk of a collection calling a block on each element (collection helpers' fast path).
typedef struct bk_walk {
    int table;            // the collection (absolute index)
    int keys;             // dictionaries: a list of their keys (absolute index); 0 for lists
    int block;            // the block (absolute index)
    int prefix;           // a slot passed before the element (reduce's accumulator); 0: none
    int action;           // BK_WALK_*
    int result;           // the result table (MAP, KEEP, DROP); the answer's slot (FIND, STOP_IF_*)
    int null;             // a slot holding `bk.null` (MAP)
    lua_Integer count;    // positions 1 ... count of the list, or of `keys`
    lua_Integer appended; // in/out: elements in a list result so far
    lua_Integer first;    // bk_walk_run: the first position visited (0 or 1: from the start)
    int returns;          // the slot the helper returns when the walk ends; 0: nothing
    int base;             // set by the walk: the stack top it works above
    lua_Integer position; // set by the walk: the position being visited
} bk_walk;

/// Raises `bad argument #arg to 'NAME' (extramsg)` for the function the trampoline runs (its name
/// is upvalue 2); for the walk, which raises in the trampoline's frame or its continuation.
int bk_walk_argerror(lua_State *L, int arg, const char *extramsg);
/// Pushes a userdata holding a copy of `walk` (the trampoline's walk reads it from the top).
void bk_walk_prepare(lua_State *L, const bk_walk *walk);
/// Runs the walk whose userdata is on top; returns the helper's result count (trampoline only).
int bk_walk_start(lua_State *L);

/// The same walk from position `first`, synchronously: inside ONE protected call (message handler
/// `handler`, the caller's frame guarded as by bk_pcall_guarded) in a copy of the caller's frame,
/// so Swift can read the results before it returns. Actions that write tables only (DISCARD, MAP,
/// KEEP, DROP): nothing is copied back. Sets `appended` and `position`. Blocks cannot yield here.
/// Returns a Lua status (error value on top on failure), or BK_WALK_NO_STACK (nothing pushed) when
/// the stack cannot grow for the copy (or the action is not one of those). Not a bk_status value
/// nor a Lua status, so neither can be mistaken for it.
#define BK_WALK_NO_STACK (-100)
int bk_walk_run(lua_State *L, bk_walk *walk, int handler);

/// bk_pcall for a C or Swift frame that uses its own slots after the call (FrameGuard.c): the
/// slots below the function are recorded (type, address) and compared after the call; when a
/// callback rewrote one (debug.setlocal), the results or error are dropped and the error
/// "bk: NAME's frame was changed while its block ran (debug.setlocal)" is returned (LUA_ERRRUN).
int bk_pcall_guarded(lua_State *L, int nargs, int nresults, int msgh);
/// Pushes that message (the running bk function's name from its upvalue 2, when there is one).
const char *bk_pushframechanged(lua_State *L);

/// lua_resume with the same rule, for Swift code that resumes coroutines.
int bk_resume(lua_State *co, lua_State *from, int nargs, int *nresults);

/// Message handler for blocks called by helpers: returns the error value unchanged and records its
/// traceback on the side, where bk_traceback finds it when the same value is reported later.
/// bk_recordtraceback for a host's protected call (LuaStack.call): an error that reaches it is one
/// no Lua code caught (a debugger's "uncaught" exception breakpoint stops there).
int bk_hostcalltraceback(lua_State *L);
int bk_recordtraceback(lua_State *L);

/// Message handler for reports: appends a traceback to a string error once (the one recorded by
/// bk_recordtraceback where the same value was raised, if any) (an error that already carries a
/// traceback keeps it, so an error crossing several Swift helpers is not traced twice). Non-string
/// error values pass through unchanged, their traceback recorded on the side (bk_pusherrorreport).
int bk_traceback(lua_State *L);
/// bk_recordtraceback for an error that ended a coroutine: (co, err) records the traceback of the
/// dead coroutine `co`, whose stack is intact until it is closed (tasks run without an xpcall).
int bk_recordcoroutinetraceback(lua_State *L);
/// Lua function (err, traced): a task's error `err`, reported where it was raised as `traced`, is
/// raised again by an await: records that traceback for err's report; the first message handler
/// (or coroutine record) that meets err appends the await's frames, so an await caught by pcall
/// costs nothing more.
int bk_recordawaitedtraceback(lua_State *L);

/// Pushes a string describing the value at `idx` the way lua.c reports errors (__tostring honoured,
/// else "(error object is a X value)"). Protected: a raising __tostring cannot escape.
void bk_pusherrormessage(lua_State *L, int idx);
/// Pushes what a report of the error value at `idx` says: the traceback recorded where it was
/// raised (bk_recordtraceback) when there is one, else a string as it is, another value as
/// bk_pusherrormessage.
void bk_pusherrorreport(lua_State *L, int idx);
/// The same text, keeping the record: for a host call's LuaError, whose value may be raised again
/// unchanged (a Swift function that called Lua), so a report further out still finds its traceback.
void bk_pusherrordescription(lua_State *L, int idx);
/// lua_CFunction (err): what a report of err says now: a string with its traceback (bk_traceback),
/// another value as bk_pusherrorreport. For reports made later, once the record is gone.
int bk_errorreport(lua_State *L);

/// lua_CFunction () -> whether the state is closing (rule 10): each entry of the tasks engine asks
/// first and refuses, naming itself (Tasks.c). C, not Swift: it is on bk.async's and bk.await's path.
int bk_stateclosing(lua_State *L);
/// Whether `co` is a task's coroutine (the engine keeps them as keys of the weak table
/// registry["bk.tasks"].taskThreads; read raw, on L's stack).
int bk_thread_is_task(lua_State *L, lua_State *co);

/// lua_CFunction (result, count, source, i, n) -> count', stop: the toolbox's flatten by one level
/// (ToolboxSplice.c): appends source[i..n] to result after `count`, each table with no metatable
/// and a first element by its elements up to the first nil (raw); stops at the first table with a
/// metatable, whose position it returns (n + 1 when it reached the end).
int bk_toolbox_splice(lua_State *L);

/// Installs the panic and warning functions luaL_newstate would (warnings start off; "@on"/"@off").
void bk_setdefaulthandlers(lua_State *L);

/// Replaces `os.exit` (when there is one) with a wrapper that marks the runtime closing before
/// `os.exit(code, true)` closes the state. Raw access; raises only on memory.
int bk_wrap_os_exit(lua_State *L);

/// Runs luaL_openlibs in protected mode, with `os.exit` wrapped; returns a Lua status.
int bk_openlibs(lua_State *L);

/// The error message luaL_typeerror would produce for `arg` (pushed); never raises except on memory.
const char *bk_pushtypeerror(lua_State *L, int arg, const char *expected, const char *fname);

// MARK: - Copying values between states (Transfer.c)

/// Copies `count` values from `first` of `from` onto `to` (workers, channels; the caller holds
/// both states): plain values, tables (cycles and shared references kept, metatables dropped),
/// Lua functions (bytecode and their upvalues, shared upvalues kept shared; an `_ENV` that is the
/// source's globals becomes the target's globals, any other is copied as a table), shareable bridged
/// objects, and the well-known values (bk, the standard library tables and C functions), which
/// become the target's own. Returns a Lua status: LUA_OK with the copies pushed on `to`, else one
/// error value on `to` naming what could not cross ("upvalue 'acc' of the block is a coroutine").
/// `what` names the values ("the block"); with `numbered` > 0 they are "what #numbered", ....
int bk_transfer_copy(lua_State *from, int first, int count, lua_State *to, const char *what, int numbered);

/// Checks the value at `idx` without copying it. LUA_OK: transferable (nothing pushed); else the
/// reason is pushed. `flags`: BK_TRANSFER_STRICT, a Lua function must also capture no table of its
/// own (its state would be lost in a copy), the rule for running a block on the worker pool;
/// BK_TRANSFER_AS_ARGUMENT, the reason is worded for a bad argument (`a coroutine cannot cross to
/// another state`, `field 'x' of the value is a FILE*, which cannot cross to another state`).
int bk_transfer_check(lua_State *L, int idx, const char *what, int flags);
#define BK_TRANSFER_STRICT 1
#define BK_TRANSFER_AS_ARGUMENT 2

/// Copies elements first ... first + count - 1 of the list at `table` of `from` (raw reads) into
/// positions offset + 1 ... of the table at `target` of `to` (a new list pushed on `to` when
/// `target` is 0). Elements share one walk, so references between them are kept. Returns a Lua
/// status; on failure one error value is pushed on `to` (and no new list), naming the element by
/// its position in `target` when given, else in `table`.
int bk_transfer_copy_range(lua_State *from, int table, lua_Integer first, lua_Integer count,
                           lua_State *to, int target, lua_Integer offset, const char *what);

/// Stops L's collector while code that must not run finalizers allocates (a copy holding locks,
/// a worker's results being cached); returns whether it stopped it (0: stopped already, or inside
/// a finalizer), to pass to bk_gc_resume. The copies above do this themselves.
int bk_gc_pause(lua_State *L);
void bk_gc_resume(lua_State *L, int paused);
/// The collector work a pause put off (the kilobytes allocated meanwhile), done now in a protected
/// call (finalizers run): call it holding the state and no other lock. Without it a state that
/// allocates only in copies (a channel's buffer, a loop that only receives) would never collect.
void bk_gc_settle(lua_State *L);

/// Implemented in Swift: 1 when the value at `idx` is a bridged object whose class is shareable.
extern int bk_transfer_is_shareable(lua_State *L, int idx);
/// Implemented in Swift: pushes onto `to` the shareable object at `idx` of `from`; 1 when pushed.
extern int bk_transfer_push_shared(lua_State *from, int idx, lua_State *to);

// MARK: - Frozen tables (Frozen.c)

/// Checks that the table at `idx` holds only data (tables, strings, numbers, booleans, `null`: the
/// state's bk.null) and pushes its read-only view (the same one every time), in a protected call.
/// Returns a Lua status; on failure the reason is pushed ("field 'f' of the table is a function, ...").
int bk_frozen_freeze(lua_State *L, int idx, int null);
/// When the value at `idx` is a frozen view: pushes its contents (what it shows: its entries, nested
/// tables as their views) and returns its id (> 0). Else returns 0 and pushes nothing. Raw reads,
/// no allocation (needs 3 free stack slots).
lua_Integer bk_frozen_contents(lua_State *L, int idx);
/// 1 when the table at `idx` has keys of its own (a view written to with rawset). No allocation.
int bk_frozen_has_own_keys(lua_State *L, int idx);
/// Pushes `to`'s view with `id` and returns 1, or returns 0 (raw, no allocation).
int bk_frozen_push_kept(lua_State *to, lua_Integer id);
/// Pushes a view with `id` showing the table at `contents` (filled by the caller afterwards) and
/// keeps it for later copies (allocates: inside the copy's protected call only).
void bk_frozen_push_copied_view(lua_State *to, int contents, lua_Integer id);

// MARK: - Observed writes (ObservedWrite.c)

/// makeWrite{ singles =, store =, handler =, report =, general = } -> the __newindex of an observed
/// table's proxy metatable: a write of a key in `singles` (key -> its one plain observer's task,
/// kept by ObservationEngine.lua's fast-path rule) stores the value in `store` and calls the task
/// with the table in a protected call (`handler` records the traceback; an error goes to
/// `report`); any other write calls `general(t, k, v)`. Yieldable.
int bk_push_observed_write(lua_State *L);

// MARK: - The hook hub (Hook.c)
//
// The one lua_Hook of a bridge state: the sandbox's limits, the profiler, the debugger and a
// script's own debug.sethook share it, and no one else calls lua_sethook. While LUA_MASKCOUNT or
// LUA_MASKLINE is on, every Lua instruction goes through Lua's hook check (about 2x slower), so
// the hub asks for them only while someone needs them; a client that must notice a flag soon
// pokes instead (bk_hook_poke): one count event for every client at the next instruction.

/// Attaches `fn` in `slot` of L's state: it gets the events in `mask` on every thread of the state
/// (count events at least every `count` instructions). Installs the hub on L now and on other
/// coroutines at their next resume or hook. Call on the thread that runs the state, with it
/// locked. Replaces what the slot held.
void bk_hook_attach(lua_State *L, int slot, bk_hook_fn fn, void *context, int mask, int count);
/// As bk_hook_attach, but L's own hook is left as it is: coroutines get the change at their next
/// resume. For a client changed while L runs inside a hook, whose events are off there anyway
/// (the debugger's evaluations): lua_sethook on L would walk every frame of a deep stack.
void bk_hook_attach_deferred(lua_State *L, int slot, bk_hook_fn fn, void *context, int mask, int count);
/// Detaches the slot; threads drop the hub at their next hook once nothing needs it.
void bk_hook_detach(lua_State *L, int slot);
/// Events wanted on thread L only, on top of the state-wide ones, delivered to the debugger slot
/// (line events inside a function that has breakpoints, or while stepping in that thread). Call
/// from inside a hook on L, or on the thread running L; 0 removes them. They stay on L across
/// yields and resumes until changed or until the debugger detaches.
void bk_hook_thread_extra(lua_State *L, int mask);
/// Sets L's hook to what the state needs now (after a change of the limits).
void bk_hook_refresh(lua_State *L);
/// Before a coroutine is resumed from Swift (bk_resume; the hub's coroutine.resume/wrap do it
/// themselves): it gets the hub when the state wants one (it may have been made before a client
/// attached) and drops a stale one.
void bk_hook_prepare(lua_State *co);
/// Whether `co` has not started yet: at its base level, its function on its stack (what
/// lua_resume starts; a running, normal or finished coroutine it refuses).
int bk_coroutine_fresh(lua_State *co);
/// L goes on after a coroutine it resumed stopped (yielded, returned or failed).
void bk_hook_resumed(lua_State *L);
/// The next instruction of L raises a count event (the limits are checked at once).
void bk_hook_count_soon(lua_State *L);
/// bk_hook_count_soon from another thread (lua_sethook is meant to be called asynchronously).
void bk_hook_count_soon_async(lua_State *L);
/// Async-signal-safe, on the OS thread that runs Lua (a profiler's SIGPROF handler): one count
/// event for every client at the next instruction of the Lua thread running here. Returns 0 when
/// no Lua of a bridge state runs on this OS thread now.
int bk_hook_poke_here(void);
/// From any thread: the same for the state `rt`, wherever it runs (its OS thread gets SIGURG, whose
/// handler pokes); a state that runs no Lua now gets the event when it next enters Lua.
void bk_hook_poke(bk_runtime *rt);
/// The Lua thread (main or coroutine) of a bridge state running on this OS thread, or NULL.
/// Async-signal-safe.
lua_State *bk_hook_running(void);
/// Records L as the Lua thread running on this OS thread (bk_pcall, bk_resume); returns the one
/// to give back to bk_hook_leave.
lua_State *bk_hook_enter(lua_State *L);
void bk_hook_leave(lua_State *L, lua_State *previous);
/// Replaces coroutine.resume/wrap (the hub follows each resumed coroutine) and debug.sethook/
/// gethook (a script's hook is kept per thread and called by the hub, beside the bridge's).
void bk_hook_install_library(lua_State *L);

// MARK: - Sandbox limits (Limits.c)

/// Instructions between two count events of the limits.
int bk_limits_step(const bk_runtime *rt);
/// The limits at a count event of the hub: counts, and raises once a limit has tripped.
void bk_limits_count(lua_State *L, bk_runtime *rt);

/// Has the hub enforce `instruction_limit`, `deadline` and `interrupted` on the state of `L` (every
/// thread, from its next resume). Once a limit trips, every further Lua instruction
/// raises the same error until `bk_reset_limits`, so a script cannot catch it and go on.
void bk_sethooks(lua_State *L);
/// The global `xpcall` becomes one whose message handler is skipped once a limit, or a debugger's
/// evaluation, has tripped (the error is raised from the hook, where a looping handler could never
/// be stopped). Protected; nothing changes when it fails.
void bk_guard_message_handlers(lua_State *L);
/// Whether a limit (`tripped`) or a debugger's evaluation limit (`evaluation_tripped`) has tripped.
int bk_limit_tripped(const bk_runtime *rt);
/// Starts a new budget: no instructions used, the deadline `time_limit` from now, no interrupt.
void bk_reset_limits(lua_State *L, bk_runtime *rt);
/// A debugger stop begins (`stopped` 1) or ends (0): every deadline of this process stands still
/// meanwhile (the time a user spends looking, at a worker too, is not the script's).
void bk_limits_hold(int stopped);
/// Asks the running script to stop with the error "interrupted" (safe from any thread or a signal
/// handler; takes effect at the next hook, so only in states with hooks installed).
void bk_interrupt(bk_runtime *rt);
/// bk_interrupt for a state that may run without hooks (workers: a count hook slows Lua 5.4's VM
/// about 2.5x, so they get one only when asked to stop): also installs the hook on `L`, from any
/// thread. Coroutines started before keep their own hooks (none): an endless loop inside one
/// stops when it yields or returns to `L`.
void bk_interrupt_installing_hook(lua_State *L, bk_runtime *rt);
/// Why the script of `rt` is to stop ("interrupted": an interrupt not yet consumed; a tripped
/// limit's message; "time limit exceeded": its deadline passed), or NULL. Only reads (the hook
/// consumes and trips): for Swift code waiting on other threads' work (the pool), which passes the
/// stop on to them.
const char *bk_stop_requested(bk_runtime *rt);
/// How long (seconds) a wait on the loop may last before `rt`'s limits are checked again: until the
/// deadline, and at most 20 ms when the count hook is installed on the main thread `L` (an
/// interrupt from another thread is then seen that soon); -1 when no limit applies.
double bk_limits_wait_cap(bk_runtime *rt, lua_State *L);
/// Has the count hook of `L` (when installed) run before its next instruction, so a stop that
/// bk_stop_requested saw trips at once instead of up to a hook step later.
void bk_check_limits_soon(lua_State *L);
/// Opens the safe library set in protected mode: base without dofile/loadfile, load of text only,
/// string, table, math, utf8, coroutine, os.time/clock/date/difftime, require of preloaded and
/// already loaded modules only. No io, debug, os.execute/exit/getenv/remove, package.loadlib.
int bk_opensafelibs(lua_State *L);

/// Writes to the C stdio streams Lua's own `print` and `io.stderr` use (so output keeps its order).
void bk_write_stdout(const char *s, size_t n);
void bk_write_stderr(const char *s, size_t n);

/// The Lua thread running the innermost exported Swift function of `rt`'s state on this OS thread,
/// or NULL when none is running here.
lua_State *bk_current_thread(bk_runtime *rt);

/// The main thread of the state `L` belongs to.
lua_State *bk_mainthread(lua_State *L);

/// Implemented in Swift: builds the `bk` module in a state made by someone else (stock lua5.4) and
/// pushes it; returns 1, or -1 with an error message on top.
extern int bk_open_module(lua_State *L);

/// The entry point `require "bk"` finds in bk.so. Errors are raised here, after Swift returned.
int luaopen_bk(lua_State *L);

/// Sets `bk` (the module table at `module`) and `bk_NAME` for each function of it whose name has
/// no `bk_` prefix, with raw sets, in the table at `globals` (Globals.c). [-0, +0]
void bk_install_globals(lua_State *L, int globals, int module);

// MARK: - Macros as functions

static inline void bk_pop(lua_State *L, int n) { lua_settop(L, -(n)-1); }
static inline void bk_newtable(lua_State *L) { lua_createtable(L, 0, 0); }
static inline const char *bk_tostring(lua_State *L, int i) { return lua_tolstring(L, i, NULL); }
static inline lua_Number bk_tonumber(lua_State *L, int i) { return lua_tonumberx(L, i, NULL); }
static inline lua_Integer bk_tointeger(lua_State *L, int i) { return lua_tointegerx(L, i, NULL); }
static inline int bk_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline int bk_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline void bk_insert(lua_State *L, int i) { lua_rotate(L, i, 1); }
static inline void bk_remove(lua_State *L, int i) { lua_rotate(L, i, -1); lua_settop(L, -2); }
static inline void bk_replace(lua_State *L, int i) { lua_copy(L, -1, i); lua_settop(L, -2); }
static inline void bk_pushcfunction(lua_State *L, lua_CFunction f) { lua_pushcclosure(L, f, 0); }
static inline void *bk_newuserdata(lua_State *L, size_t size) { return lua_newuserdatauv(L, size, 1); }
static inline int bk_isnoneornil(lua_State *L, int i) { return lua_type(L, i) <= 0; }
static inline int bk_getmetatable_named(lua_State *L, const char *name) {
    return lua_getfield(L, LUA_REGISTRYINDEX, name);  // the registry has no metatable: cannot raise
}
static inline int bk_rawgetfield(lua_State *L, int idx, const char *k) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, k);
    return lua_rawget(L, idx);
}
static inline void bk_rawsetfield(lua_State *L, int idx, const char *k) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, k);
    lua_rotate(L, -2, 1);
    lua_rawset(L, idx);
}
static inline lua_Integer bk_rawlen(lua_State *L, int i) { return (lua_Integer)lua_rawlen(L, i); }
static inline int bk_loadbuffer(lua_State *L, const char *s, size_t n, const char *name, const char *mode) {
    return luaL_loadbufferx(L, s, n, name, mode);
}
static inline int bk_loadfile(lua_State *L, const char *path) { return luaL_loadfilex(L, path, NULL); }
static inline int bk_gc_generational(lua_State *L) { return lua_gc(L, LUA_GCGEN, 0, 0); }
static inline int bk_gc_count_kb(lua_State *L) { return lua_gc(L, LUA_GCCOUNT); }
static inline int bk_gc_collect(lua_State *L) { return lua_gc(L, LUA_GCCOLLECT); }
static inline void bk_warning_on(lua_State *L) { lua_warning(L, "@on", 0); }
static inline int bk_version_num(void) { return LUA_VERSION_NUM; }
static inline const char *bk_copyright(void) { return LUA_COPYRIGHT; }
static inline const char *bk_release(void) { return LUA_RELEASE; }

#endif
