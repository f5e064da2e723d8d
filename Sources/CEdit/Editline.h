// libedit (BSD editline), loaded with dlopen when the prompt first starts instead of linked: runs
// of `bklua -e` or a script never load it and what it links (libtinfo, libbsd, libmd), since
// start-up time is part of bklua's contract. CEdit.c calls readline's API through `editline`.
#ifndef CEDIT_EDITLINE_H
#define CEDIT_EDITLINE_H

#include <stddef.h>
#include <stdio.h>
#include <editline/readline.h>

/// Every name of readline's API that CEdit.c uses (functions and variables alike).
#define EDITLINE_NAMES(X) \
    X(rl_add_defun) X(rl_attempted_completion_function) X(rl_attempted_completion_over) \
    X(rl_basic_word_break_characters) X(rl_callback_handler_install) \
    X(rl_callback_handler_remove) X(rl_callback_read_char) X(rl_catch_signals) \
    X(rl_completer_word_break_characters) X(rl_completion_append_character) \
    X(rl_completion_matches) X(rl_forced_update_display) X(rl_getc_function) X(rl_initialize) \
    X(rl_insert_text) X(rl_line_buffer) X(rl_outstream) X(rl_parse_and_bind) X(rl_point) \
    X(rl_readline_name) X(rl_resize_terminal) \
    X(add_history) X(read_history) X(stifle_history) X(using_history) X(write_history)

/// The addresses of those names in the loaded libedit, typed as the header declares them: call a
/// function as `editline.rl_initialize()`, use a variable as `*editline.rl_point`.
typedef struct {
#define EDITLINE_FIELD(name) __typeof__(name) *name;
    EDITLINE_NAMES(EDITLINE_FIELD)
#undef EDITLINE_FIELD
} editline_api;

extern editline_api editline;

/// Loads libedit and fills `editline` (once; later calls answer the first one's result). Returns 0,
/// or -1 with the reason in `error`.
int editline_load(char *error, size_t error_size);

#endif
