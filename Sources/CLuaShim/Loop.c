#define _GNU_SOURCE
#include "CLuaShimLoop.h"
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int bk_loop_pipe(int fds[2]) {
    return pipe2(fds, O_NONBLOCK | O_CLOEXEC);
}

int bk_loop_wait_readable(int fd, long long timeout_ns) {
    struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
    struct timespec ts;
    struct timespec *timeout = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
        ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
        timeout = &ts;
    }
    int n = ppoll(&p, 1, timeout, NULL);
    return n > 0 ? 1 : 0;
}

long long bk_loop_thread_id(void) {
    return (long long)syscall(SYS_gettid);
}
