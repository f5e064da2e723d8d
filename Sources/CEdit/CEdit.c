#define _GNU_SOURCE  // pipe2
#include "CEdit.h"

#include <editline/readline.h>
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

static int editing;  // a line is being edited (terminal in raw mode)
static void restore_at_exit(void);

void cedit_initialize(const char *program_name) {
    atexit(restore_at_exit);
    // libedit decodes keys by LC_CTYPE: without a UTF-8 one, typed UTF-8 text is dropped. (Only
    // the character type changes: Lua's lexer and number formatting do not depend on it.)
    const char *ctype = setlocale(LC_CTYPE, "");
    if (ctype == NULL || strcmp(ctype, "C") == 0 || strcmp(ctype, "POSIX") == 0) setlocale(LC_CTYPE, "C.UTF-8");
    rl_readline_name = program_name;
    rl_catch_signals = 0;  // bklua owns SIGINT; libedit must not re-raise it
    rl_initialize();
    // A Lua name with its dots and colons is one word: `string.fo` completes to `string.format`.
    rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{}()[],+-*/%^~#";
    rl_completer_word_break_characters = (char *)rl_basic_word_break_characters;
    rl_attempted_completion_function = attempt_completion;
    rl_completion_append_character = '\0';
    // This libedit rings the bell even when Tab found the one completion; its bell becomes a
    // no-op attribute reset instead.
    rl_parse_and_bind("settc bl \033[m");
}

void cedit_begin_line(const char *prompt) {
    current_prompt = prompt;
    line_done = 0;
    rl_callback_handler_install(prompt, line_handler);
    editing = 1;
}

void cedit_end_line(void) {
    editing = 0;
    rl_callback_handler_remove();
}

cedit_status cedit_read_key(void) {
    rl_callback_read_char();
    int done = line_done;
    line_done = 0;
    if (done == CEDIT_EOF) {
        // libedit has drawn the Ctrl-D as "^D": show the bare prompt, as lua.c leaves it.
        cedit_hide_line();
        fputs(current_prompt, stdout);
        fflush(stdout);
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
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return 80;
}

void cedit_hide_line(void) {
    // The cursor is on the row of the prompt plus the rows the text before it wrapped onto.
    size_t before = visible_width(current_prompt, strlen(current_prompt));
    if (rl_line_buffer != NULL && rl_point > 0) before += visible_width(rl_line_buffer, (size_t)rl_point);
    size_t rows_up = before / (size_t)terminal_columns();
    fflush(stdout);
    if (rows_up > 0) fprintf(stdout, "\r\033[%zuA\033[J", rows_up);
    else fputs("\r\033[J", stdout);
    fflush(stdout);
}

void cedit_show_line(void) {
    fflush(stdout);
    fflush(stderr);
    // libedit redraws from column 0 of the current row, where the output left the cursor.
    rl_forced_update_display();
    fflush(stdout);
}

// MARK: - Output of work done at the prompt

static int capture_fd = -1;
static int saved_stdout = -1, saved_stderr = -1;

void cedit_capture_output(void) {
    fflush(stdout);
    fflush(stderr);
    if (capture_fd < 0) capture_fd = memfd_create("bklua-prompt-output", MFD_CLOEXEC);
    if (capture_fd < 0 || ftruncate(capture_fd, 0) != 0 || lseek(capture_fd, 0, SEEK_SET) != 0) {
        cedit_hide_line();  // no capture: erase the line in case something is written
        return;
    }
    saved_stdout = dup(STDOUT_FILENO);
    dup2(capture_fd, STDOUT_FILENO);
    // stderr joins only when it is the terminal too (a redirected stderr keeps its file).
    if (isatty(STDERR_FILENO)) {
        saved_stderr = dup(STDERR_FILENO);
        dup2(capture_fd, STDERR_FILENO);
    }
}

void cedit_show_captured_output(void) {
    if (saved_stdout < 0) {
        cedit_show_line();
        return;
    }
    fflush(stdout);
    fflush(stderr);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
    saved_stdout = -1;
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
    off_t size = lseek(capture_fd, 0, SEEK_CUR);
    if (size <= 0) return;  // nothing was printed: the line stays as it is
    cedit_hide_line();
    char buffer[8192];
    char last = '\n';
    for (off_t offset = 0; offset < size;) {
        ssize_t count = pread(capture_fd, buffer, sizeof buffer, offset);
        if (count <= 0) break;
        for (ssize_t done = 0; done < count;) {
            ssize_t written = write(STDOUT_FILENO, buffer + done, (size_t)(count - done));
            if (written <= 0) break;
            done += written;
        }
        last = buffer[count - 1];
        offset += count;
    }
    if (last != '\n') {
        ssize_t written = write(STDOUT_FILENO, "\n", 1);  // the prompt starts a row of its own
        (void)written;
    }
    cedit_show_line();
}

/// `os.exit` from a timer at the prompt: show what it printed and leave the terminal as it was.
static void restore_at_exit(void) {
    if (saved_stdout >= 0) cedit_show_captured_output();
    if (editing) {
        fputs("\n", stdout);
        fflush(stdout);
        cedit_end_line();
    }
}

// MARK: - History

void cedit_history_load(const char *path, int limit) {
    using_history();
    stifle_history(limit);
    read_history(path);
}

void cedit_history_add(const char *line) { add_history(line); }

int cedit_history_save(const char *path) { return write_history(path); }

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
    rl_attempted_completion_over = 1;  // never fall back to file names
    if (completer == NULL) return NULL;
    completer(completer_context, text);
    if (candidate_count == 0) return NULL;
    return rl_completion_matches(text, next_candidate);
}

// MARK: - Ctrl-C

static volatile sig_atomic_t interrupt_received;
static lua_State *volatile running_state;
static int interrupt_pipe[2] = {-1, -1};

int cedit_interrupt_descriptor(void) {
    if (interrupt_pipe[0] < 0) {
        if (pipe2(interrupt_pipe, O_CLOEXEC) != 0) return -1;
        fcntl(interrupt_pipe[1], F_SETFL, O_NONBLOCK);  // the handler never blocks
    }
    return interrupt_pipe[0];
}

/// lua.c's `lstop`: raises in the Lua code that was running when Ctrl-C came.
static void stop_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
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
    lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
    if (interrupt_pipe[1] >= 0) {
        char byte = 1;
        ssize_t written = write(interrupt_pipe[1], &byte, 1);
        (void)written;
    }
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
    rl_resize_terminal();
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
    running_state = L;
    if (L == NULL && previous != NULL) {
        if (lua_gethook(previous) == stop_hook) lua_sethook(previous, NULL, 0, 0);
        cedit_watch_interrupts();  // back from SIG_DFL if Ctrl-C came
    }
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
