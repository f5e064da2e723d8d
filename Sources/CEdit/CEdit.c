#define _GNU_SOURCE  // pipe2
#include "CEdit.h"

#include "Editline.h"
#include <lauxlib.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>

// MARK: - Line editing

static char *completed_line;   // set by the line handler
static int line_done;          // 0 editing, CEDIT_LINE or CEDIT_EOF
static const char *current_prompt = "";

static void line_handler(char *line) {
    if (line == NULL) {
        line_done = CEDIT_EOF;
        return;
    }
    free(completed_line);
    completed_line = line;
    line_done = CEDIT_LINE;
}

static char **attempt_completion(const char *text, int start, int end);
void cedit_hide_line(void);
static int read_key_code(FILE *stream);
static int paste_end(int count, int key);
void cedit_show_line(void);
#define PASTE_END_KEY 0x1e  // Ctrl-^, bound to paste_end (nothing else uses it)

static int editing;  // a line is being edited (terminal in raw mode)
static void restore_at_exit(void);
/// The terminal, for libedit and the redrawing: stdout's descriptor is redirected at times (see
/// "Output at the prompt"), this stream never is.
static FILE *terminal;

int cedit_initialize(const char *program_name, char *error, size_t error_size) {
    if (editline_load(error, error_size) != 0) return -1;
    atexit(restore_at_exit);
    int terminal_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    terminal = terminal_fd >= 0 ? fdopen(terminal_fd, "w") : NULL;
    if (terminal == NULL) terminal = stdout;
    *editline.rl_outstream = terminal;
    // libedit decodes keys by LC_CTYPE: without a UTF-8 one, typed UTF-8 text is dropped. (Only
    // the character type changes: Lua's lexer and number formatting do not depend on it.)
    const char *ctype = setlocale(LC_CTYPE, "");
    if (ctype == NULL || strcmp(ctype, "C") == 0 || strcmp(ctype, "POSIX") == 0) setlocale(LC_CTYPE, "C.UTF-8");
    *editline.rl_readline_name = program_name;
    *editline.rl_catch_signals = 0;  // bklua owns SIGINT; libedit must not re-raise it
    *editline.rl_getc_function = read_key_code;  // bracketed paste (see "Pasting")
    editline.rl_initialize();
    editline.rl_add_defun("bklua-paste-end", paste_end, PASTE_END_KEY);
    // A Lua name with its dots and colons is one word: `string.fo` completes to `string.format`.
    *editline.rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{}()[],+-*/%^~#";
    *editline.rl_completer_word_break_characters = (char *)*editline.rl_basic_word_break_characters;
    *editline.rl_attempted_completion_function = attempt_completion;
    *editline.rl_completion_append_character = '\0';
    // This libedit rings the bell even when Tab found the one completion; its bell becomes a
    // no-op attribute reset instead.
    editline.rl_parse_and_bind("settc bl \033[m");
    return 0;
}

void cedit_begin_line(const char *prompt) {
    current_prompt = prompt;
    line_done = 0;
    fputs("\033[?2004h", terminal);  // bracketed paste on: pasted text comes between markers
    fflush(terminal);
    editline.rl_callback_handler_install(prompt, line_handler);
    editing = 1;
}

void cedit_end_line(void) {
    editing = 0;
    editline.rl_callback_handler_remove();
    fputs("\033[?2004l", terminal);  // off while Lua runs (a script may read the terminal)
    fflush(terminal);
}

// MARK: - Pasting
//
// With bracketed paste on, the terminal sends pasted text between ESC [200~ and ESC [201~. The
// key reader below drops the markers and notes that a paste is going on; a Tab inside one is
// text, not a completion request (attempt_completion inserts it). libedit gets whole characters
// from it (UTF-8 decoded here, as libedit's own reader does).

static int pasting;

static int paste_end(int count, int key) {
    (void)count;
    (void)key;
    cedit_hide_line();
    cedit_show_line();
    return 0;
}
static int pending[8];            // bytes read ahead that turned out not to be a marker
static int pending_count, pending_next;

static int read_byte(int fd, int wait_ms) {
    if (pending_next < pending_count) return pending[pending_next++];
    if (wait_ms >= 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, wait_ms) <= 0) return -1;
    }
    unsigned char c;
    ssize_t n;
    do { n = read(fd, &c, 1); } while (n < 0 && errno == EINTR);
    return n == 1 ? c : -1;
}

int cedit_has_pending_input(void) { return pending_next < pending_count; }

static int read_key_code(FILE *stream) {
    int fd = fileno(stream);
    for (;;) {
        int c = read_byte(fd, -1);
        if (c != 0x1b || pending_next < pending_count) {
            if (c < 0x80) return c;  // ASCII or EOF (-1)
            // UTF-8: the continuation bytes of a character arrive with it.
            int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
            int code = extra == 3 ? c & 0x07 : extra == 2 ? c & 0x0f : c & 0x1f;
            for (int i = 0; i < extra; i++) {
                int next = read_byte(fd, 100);
                if (next < 0 || (next & 0xc0) != 0x80) return 0xfffd;
                code = (code << 6) | (next & 0x3f);
            }
            return extra == 0 ? 0xfffd : code;
        }
        // ESC: a paste marker (ESC [ 2 0 0 ~ or ESC [ 2 0 1 ~) arrives as one write.
        static const char start[] = "[200~", end[] = "[201~";
        int got[5], n = 0, is_start = 1, is_end = 1;
        while (n < 5 && (is_start || is_end)) {
            int next = read_byte(fd, 30);
            if (next < 0) break;
            got[n] = next;
            is_start = is_start && next == start[n];
            is_end = is_end && next == end[n];
            n++;
        }
        if (n == 5 && (is_start || is_end)) {
            pasting = is_start;
            // Nothing more ready (the end of a paste): a key bound to a no-op that redraws the
            // line (which draws the pasted Tabs, inserted by completion without drawing).
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, 0) <= 0) return PASTE_END_KEY;
            continue;
        }
        // Not a marker: ESC now, the bytes read after it next (libedit asks for them at once).
        pending_count = 0;
        pending_next = 0;
        for (int i = 0; i < n; i++) pending[pending_count++] = got[i];
        return 0x1b;
    }
}

cedit_status cedit_read_key(void) {
    editline.rl_callback_read_char();
    int done = line_done;
    line_done = 0;
    if (done == CEDIT_EOF) {
        // libedit has drawn the Ctrl-D as "^D": show the bare prompt, as lua.c leaves it.
        cedit_hide_line();
        fputs(current_prompt, terminal);
        fflush(terminal);
    }
    return (cedit_status)done;
}

char *cedit_take_line(void) {
    char *line = completed_line;
    completed_line = NULL;
    return line;
}

/// Visible columns of `s` (UTF-8 continuation bytes and escape sequences take none).
static size_t visible_width(const char *s, size_t n) {
    size_t width = 0;
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b) {  // CSI ... final byte
            i++;
            if (i < n && s[i] == '[') {
                while (i + 1 < n && s[i + 1] && !((unsigned char)s[i + 1] >= 0x40 && (unsigned char)s[i + 1] <= 0x7e)) i++;
                i++;
            }
            continue;
        }
        if ((c & 0xc0) != 0x80 && c >= 0x20) width++;
    }
    return width;
}

static int terminal_columns(void) {
    struct winsize size;
    if (ioctl(fileno(terminal), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return 80;
}

void cedit_hide_line(void) {
    // The cursor is on the row of the prompt plus the rows the text before it wrapped onto.
    size_t before = visible_width(current_prompt, strlen(current_prompt));
    const char *line = editline.rl_line_buffer != NULL ? *editline.rl_line_buffer : NULL;
    if (line != NULL && *editline.rl_point > 0) before += visible_width(line, (size_t)*editline.rl_point);
    size_t rows_up = before / (size_t)terminal_columns();
    fflush(stdout);
    if (rows_up > 0) fprintf(terminal, "\r\033[%zuA\033[J", rows_up);
    else fputs("\r\033[J", terminal);
    fflush(terminal);
}

void cedit_show_line(void) {
    fflush(stdout);
    fflush(stderr);
    // libedit redraws from column 0 of the current row, where the output left the cursor.
    editline.rl_forced_update_display();
    fflush(terminal);
}

// MARK: - Output at the prompt
//
// While the prompt waits, stdout and stderr (when it is the terminal) go to a pipe the wait also
// watches: a block on another thread that prints wakes the prompt, and its output is shown above
// the line. While the loop's due work runs on this thread, they go to a memory file instead (a
// pipe nobody reads while the work runs could fill up and block it).

static int saved_stdout = -1, saved_stderr = -1;
static int capturing_wait;  // which capture saved_stdout belongs to
static int wait_pipe[2] = {-1, -1};
static int work_file = -1;

static void redirect_output(int fd) {
    fflush(stdout);
    fflush(stderr);
    saved_stdout = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    if (isatty(STDERR_FILENO)) {  // a redirected stderr keeps its file
        saved_stderr = dup(STDERR_FILENO);
        dup2(fd, STDERR_FILENO);
    }
}

static void restore_output(void) {
    fflush(stdout);
    fflush(stderr);
    if (saved_stdout >= 0) {
        dup2(saved_stdout, STDOUT_FILENO);
        close(saved_stdout);
        saved_stdout = -1;
    }
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
}

/// Writes captured output above the prompt (once something came), then draws the line again.
typedef struct {
    int shown;
    char last;
} above_prompt;

static void show_above_prompt(above_prompt *state, const char *bytes, size_t count) {
    if (count == 0) return;
    if (!state->shown) {
        cedit_hide_line();
        state->shown = 1;
    }
    fwrite(bytes, 1, count, terminal);
    state->last = bytes[count - 1];
}

static void finish_above_prompt(above_prompt *state) {
    if (!state->shown) return;  // nothing was printed: the line stays as it is
    if (state->last != '\n') fputc('\n', terminal);  // the prompt starts a row of its own
    fflush(terminal);
    cedit_show_line();
}

int cedit_capture_while_waiting(void) {
    if (wait_pipe[0] < 0) {
        if (pipe2(wait_pipe, O_CLOEXEC) != 0) return -1;
        fcntl(wait_pipe[0], F_SETFL, O_NONBLOCK);  // the writers block when it is full, not the reader
    }
    redirect_output(wait_pipe[1]);
    capturing_wait = 1;
    return wait_pipe[0];
}

void cedit_show_output_of_wait(void) {
    restore_output();
    capturing_wait = 0;
    above_prompt state = {0, '\n'};
    char buffer[8192];
    ssize_t count;
    while ((count = read(wait_pipe[0], buffer, sizeof buffer)) > 0) show_above_prompt(&state, buffer, (size_t)count);
    finish_above_prompt(&state);
}

void cedit_capture_output(void) {
    if (work_file < 0) work_file = memfd_create("bklua-prompt-output", MFD_CLOEXEC);
    if (work_file < 0 || ftruncate(work_file, 0) != 0 || lseek(work_file, 0, SEEK_SET) != 0) {
        cedit_hide_line();  // no capture: erase the line in case something is written
        return;
    }
    redirect_output(work_file);
}

void cedit_show_captured_output(void) {
    if (saved_stdout < 0) {
        cedit_show_line();
        return;
    }
    restore_output();
    off_t size = lseek(work_file, 0, SEEK_CUR);
    above_prompt state = {0, '\n'};
    char buffer[8192];
    for (off_t offset = 0; offset < size;) {
        ssize_t count = pread(work_file, buffer, sizeof buffer, offset);
        if (count <= 0) break;
        show_above_prompt(&state, buffer, (size_t)count);
        offset += count;
    }
    finish_above_prompt(&state);
}

/// `os.exit` from a block at the prompt: show what it printed and leave the terminal as it was.
static void restore_at_exit(void) {
    if (saved_stdout >= 0 && capturing_wait) cedit_show_output_of_wait();
    else if (saved_stdout >= 0) cedit_show_captured_output();
    if (editing) {
        fputs("\n", terminal);
        fflush(terminal);
        cedit_end_line();
    }
}

// MARK: - History

void cedit_history_load(const char *path, int limit) {
    editline.using_history();
    editline.stifle_history(limit);
    editline.read_history(path);
}

void cedit_history_add(const char *line) { editline.add_history(line); }

int cedit_history_save(const char *path) { return editline.write_history(path); }

// MARK: - Completion

static cedit_completer completer;
static void *completer_context;
static char **candidates;
static size_t candidate_count, candidate_capacity;

void cedit_set_completer(cedit_completer function, void *context) {
    completer = function;
    completer_context = context;
}

void cedit_add_completion(const char *candidate) {
    if (candidate_count == candidate_capacity) {
        size_t capacity = candidate_capacity ? candidate_capacity * 2 : 32;
        char **grown = realloc(candidates, capacity * sizeof(char *));
        if (grown == NULL) return;
        candidates = grown;
        candidate_capacity = capacity;
    }
    char *copy = strdup(candidate);
    if (copy != NULL) candidates[candidate_count++] = copy;
}

static char *next_candidate(const char *text, int state) {
    static size_t next;
    (void)text;
    if (state == 0) next = 0;
    if (next < candidate_count) return strdup(candidates[next++]);
    return NULL;
}

static char **attempt_completion(const char *text, int start, int end) {
    (void)start;
    (void)end;
    for (size_t i = 0; i < candidate_count; i++) free(candidates[i]);
    candidate_count = 0;
    *editline.rl_attempted_completion_over = 1;  // never fall back to file names
    if (pasting) {  // a pasted Tab is text
        editline.rl_insert_text("\t");
        return NULL;
    }
    if (completer == NULL) return NULL;
    completer(completer_context, text);
    if (candidate_count == 0) return NULL;
    return editline.rl_completion_matches(text, next_candidate);
}

// MARK: - Ctrl-C

static volatile sig_atomic_t interrupt_received;
static lua_State *volatile running_state;
// Counts the commands run with Ctrl-C armed. A Ctrl-C writes the running command's number to the
// pipe, and its watcher interrupts the event loop only while that command still runs: the hook may
// already have ended it, and a late interrupt would stop the next command at once.
static volatile sig_atomic_t command_serial;
static int interrupt_pipe[2] = {-1, -1};
// A Ctrl-C whose stop hook has not fired yet. Another hook owner of L (the bridge's hook hub, which
// reapplies its hook at its own events) may replace the stop hook in the instant between checking for
// a foreign hook and setting its own; the interrupt watcher then sets it again (cedit_interrupt_rearm).
static int stop_pending;

int cedit_interrupt_descriptor(void) {
    if (interrupt_pipe[0] < 0) {
        if (pipe2(interrupt_pipe, O_CLOEXEC) != 0) return -1;
        fcntl(interrupt_pipe[1], F_SETFL, O_NONBLOCK);  // the handler never blocks
    }
    return interrupt_pipe[0];
}

/// The hook that was set when Ctrl-C came (a sandbox's count hook, a debug.sethook): the stop
/// hook puts it back, so limits and user hooks outlive an interruption.
static lua_Hook previous_hook;
static int previous_mask, previous_count;

/// lua.c's `lstop`: raises in the Lua code that was running when Ctrl-C came.
static void stop_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    __atomic_store_n(&stop_pending, 0, __ATOMIC_SEQ_CST);  // before the hook goes: see cedit_interrupt_rearm
    lua_sethook(L, previous_hook, previous_mask, previous_count);
    luaL_error(L, "interrupted!");
}

static void arm_stop_hook(lua_State *L) {
    if (lua_gethook(L) != stop_hook) {
        previous_hook = lua_gethook(L);
        previous_mask = lua_gethookmask(L);
        previous_count = lua_gethookcount(L);
    }
    lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static void on_interrupt(int signal_number) {
    (void)signal_number;
    interrupt_received = 1;
    lua_State *L = running_state;
    if (L == NULL) return;
    // lua.c's `laction`: lua_sethook is safe to call from a signal handler. Code that never gets
    // back to this Lua thread (a wait in Swift, a loop in a timer) is not stopped by the hook, so
    // as in lua.c a second Ctrl-C ends the process.
    signal(SIGINT, SIG_DFL);
    __atomic_store_n(&stop_pending, 1, __ATOMIC_SEQ_CST);
    arm_stop_hook(L);
    if (interrupt_pipe[1] >= 0) {
        char byte = (char)command_serial;
        ssize_t written = write(interrupt_pipe[1], &byte, 1);
        (void)written;
    }
}

// MARK: - SIGINT and SIGTERM ending a run

static int termination_pipe[2] = {-1, -1};

static void on_termination(int signal_number) {
    int saved = errno;
    signal(signal_number, SIG_DFL);  // a second one ends the process at once
    unsigned char byte = (unsigned char)signal_number;
    ssize_t written = write(termination_pipe[1], &byte, 1);
    (void)written;
    errno = saved;
}

int cedit_watch_termination(void) {
    if (termination_pipe[0] < 0) {
        if (pipe2(termination_pipe, O_CLOEXEC) != 0) return -1;
        fcntl(termination_pipe[1], F_SETFL, O_NONBLOCK);  // the handler never blocks
    }
    static const int signals[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction action, previous;
        // Ignored when bklua started (a background job of a shell without job control): left so.
        if (sigaction(signals[i], NULL, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_termination;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;  // the script's reads and waits go on meanwhile
        sigaction(signals[i], &action, NULL);
    }
    return termination_pipe[0];
}

void cedit_end_by_signal(int signal_number) {
    signal(signal_number, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(signal_number);
    _exit(128 + signal_number);  // not reached: the signal ends the process
}

static volatile sig_atomic_t resized;

static void on_resize(int signal_number) {
    (void)signal_number;
    resized = 1;
}

void cedit_watch_resizes(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_resize;
    sigemptyset(&action.sa_mask);
    // Reads in running Lua code go on after a resize; poll() at the prompt returns regardless.
    action.sa_flags = SA_RESTART;
    sigaction(SIGWINCH, &action, NULL);
}

void cedit_apply_resize(void) {
    if (!resized) return;
    resized = 0;
    editline.rl_resize_terminal();
}

void cedit_watch_interrupts(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: poll() at the prompt returns EINTR
    sigaction(SIGINT, &action, NULL);
}

void cedit_set_running_state(lua_State *L) {
    lua_State *previous = running_state;
    if (L != NULL && previous == NULL) command_serial = (command_serial + 1) & 0xff;
    __atomic_store_n(&stop_pending, 0, __ATOMIC_SEQ_CST);
    running_state = L;
    if (L == NULL && previous != NULL) {
        if (lua_gethook(previous) == stop_hook) lua_sethook(previous, previous_hook, previous_mask, previous_count);
        cedit_watch_interrupts();  // back from SIG_DFL if Ctrl-C came
    }
}

int cedit_interrupt_is_current(unsigned char command) {
    return running_state != NULL && (unsigned char)command_serial == command;
}

int cedit_interrupt_rearm(unsigned char command) {
    lua_State *L = running_state;
    if (L == NULL || (unsigned char)command_serial != command) return 0;
    // The hook first: stop_hook clears `stop_pending` before it puts the previous hook back, so a
    // hook seen replaced and then a Ctrl-C seen pending was never a fired stop hook.
    int replaced = lua_gethook(L) != stop_hook;
    if (!__atomic_load_n(&stop_pending, __ATOMIC_SEQ_CST)) return 0;
    if (replaced) arm_stop_hook(L);
    return 1;
}

int cedit_take_interrupt(void) {
    int received = interrupt_received;
    interrupt_received = 0;
    return received;
}

// MARK: - Lua helpers

int cedit_tolstring(lua_State *L) {
    luaL_tolstring(L, 1, NULL);
    return 1;
}
