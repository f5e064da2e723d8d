// System calls the event loop needs that Swift's Glibc module does not import (GNU extensions).
#ifndef CLUASHIM_LOOP_H
#define CLUASHIM_LOOP_H

/// Creates a non-blocking, close-on-exec pipe: fds[0] is read, fds[1] is write. Returns 0 or -1.
int bk_loop_pipe(int fds[2]);

/// Waits until `fd` is readable or `timeout_ns` nanoseconds have passed (< 0: no timeout), with
/// nanosecond precision (ppoll). Returns 1 when readable, 0 on timeout or interruption.
int bk_loop_wait_readable(int fd, long long timeout_ns);

/// The kernel's id of the calling thread (gettid): distinct for every live thread of the process.
long long bk_loop_thread_id(void);

#endif
