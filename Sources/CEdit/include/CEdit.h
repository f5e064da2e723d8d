// bklua's line editor: libedit (BSD editline) through its readline-compatible API (loaded by
// cedit_initialize, not linked: see Editline.h), driven one byte at a time so the REPL can run the
// event loop while the prompt waits, plus lua.c's Ctrl-C interrupt (a debug hook set from the
// signal handler).
#ifndef CEDIT_H
#define CEDIT_H

#include <lua.h>
#include <stddef.h>

// MARK: - Line editing

/// Loads libedit and sets it up on stdin/stdout (no signal handling of its own, Lua-friendly word
/// breaks). Returns 0, or -1 with the reason in `error` when libedit cannot be loaded: then no
/// other line editing or history function may be called.
int cedit_initialize(const char *program_name, char *error, size_t error_size);

/// Shows `prompt` with an empty line and starts editing (terminal in raw mode).
void cedit_begin_line(const char *prompt);

/// Stops editing (terminal back in cooked mode, as while Lua code runs).
void cedit_end_line(void);

/// What feeding a byte did.
typedef enum {
    CEDIT_EDITING = 0,  // still editing the line
    CEDIT_LINE = 1,     // a line is complete: take it with cedit_take_line
    CEDIT_EOF = 2,      // Ctrl-D on an empty line
} cedit_status;

/// Lets libedit read and act on one key from stdin (call it when stdin is readable).
cedit_status cedit_read_key(void);

/// Whether keys read ahead (after an ESC that was not a paste marker) wait: call cedit_read_key
/// without waiting for stdin.
int cedit_has_pending_input(void);

/// The completed line (malloc'd; the caller frees it), or NULL.
char *cedit_take_line(void);

/// Erases the prompt and the line being typed, leaving the cursor at column 0 of the prompt's first
/// row, so output can be written where the prompt was.
void cedit_hide_line(void);

/// Draws the prompt and the line being typed again (after cedit_hide_line and some output).
void cedit_show_line(void);

/// Sends what is written to stdout (and to stderr when it is the terminal) to a pipe while the
/// prompt waits; returns the pipe's reading end for the wait to watch (-1 on failure: no capture).
int cedit_capture_while_waiting(void);

/// Ends that capture; what came is shown above the prompt and the line drawn again after it.
void cedit_show_output_of_wait(void);

/// Sends what is written to stdout (and to stderr when it is the terminal) to a buffer: run
/// the event loop's due work between this and cedit_show_captured_output.
void cedit_capture_output(void);

/// Ends the capture; if anything was written, it appears above the prompt and the line being
/// typed is drawn again after it (nothing happens on screen otherwise).
void cedit_show_captured_output(void);

/// Notes terminal resizes (SIGWINCH); cedit_apply_resize tells libedit the new size.
void cedit_watch_resizes(void);
void cedit_apply_resize(void);

// MARK: - History

void cedit_history_load(const char *path, int limit);
void cedit_history_add(const char *line);
int cedit_history_save(const char *path);

// MARK: - Completion

/// Called with the word before the cursor (Lua names, dots and colons included); answers through
/// cedit_add_completion.
typedef void (*cedit_completer)(void *context, const char *word);
void cedit_set_completer(cedit_completer completer, void *context);
/// Adds one full replacement for the word being completed.
void cedit_add_completion(const char *candidate);

// MARK: - Ctrl-C

/// Installs the SIGINT handler (no SA_RESTART: a wait at the prompt returns EINTR).
void cedit_watch_interrupts(void);
/// While `L` runs Lua code (NULL when it does not), Ctrl-C makes it raise "interrupted!" and a
/// second Ctrl-C ends the process (lua.c's behaviour). Setting NULL removes a stop hook that did
/// not fire and arms the handler again.
void cedit_set_running_state(lua_State *L);
/// True once per Ctrl-C received since the last call.
int cedit_take_interrupt(void);
/// Whether the command a Ctrl-C was for (the byte it wrote to the interrupt descriptor) still runs.
int cedit_interrupt_is_current(unsigned char command);
/// While the Ctrl-C of `command` has not stopped it yet (1), sets its stop hook again if another hook
/// owner replaced it meanwhile; 0 once it fired or the command ended. For the interrupt watcher,
/// from any thread, as lua.c's handler sets the hook.
int cedit_interrupt_rearm(unsigned char command);
/// A descriptor that becomes readable when Ctrl-C interrupts running code (-1 on failure): a
/// thread watching it can stop waits the debug hook cannot reach (the event loop in `bk.run`).
int cedit_interrupt_descriptor(void);

// MARK: - SIGINT and SIGTERM ending a run

/// Catches SIGINT and SIGTERM (not when ignored at start): each writes its number (one byte) to
/// the returned descriptor (-1 on failure), for a thread that ends the run and then calls
/// cedit_end_by_signal; a second one ends the process at once.
int cedit_watch_termination(void);
/// Ends the process by `signal_number` with its default action (a shell sees 128 + the number).
void cedit_end_by_signal(int signal_number);

// MARK: - Lua helpers

/// lua_CFunction: returns luaL_tolstring of its argument (__tostring and __name honoured). Call it
/// only in protected mode.
int cedit_tolstring(lua_State *L);

#endif
