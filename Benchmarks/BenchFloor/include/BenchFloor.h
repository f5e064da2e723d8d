#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H

/// The floor under the debugger's never-hit breakpoint benchmark: the same script in a bare Lua
/// state (no bridge), with an empty C call hook (Lua's own cost of a call event) or without.

/// A bare state that has run `script` (NULL when it failed); `hooked`: with the empty call hook.
void *bench_floor_state(const char *script, int hooked);
/// Calls the global `function` `times` times; the seconds it took (monotonic), or -1 on an error.
double bench_floor_run(void *state, const char *function, int times);

#endif
