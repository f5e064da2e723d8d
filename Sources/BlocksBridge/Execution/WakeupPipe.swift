#if canImport(Glibc)
import Glibc
#endif
import CLuaShim
import Synchronization

/// A self-pipe: other threads write a byte to wake the loop (or a host polling `readDescriptor`).
/// One byte at most is in flight, so the pipe never fills.
final class WakeupPipe: @unchecked Sendable {
    let readDescriptor: Int32
    private let writeDescriptor: Int32
    private let signalled = Atomic<Bool>(false)

    init() {
        var fds: [Int32] = [-1, -1]
        if bk_loop_pipe(&fds) != 0 { fds = [-1, -1] }
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    deinit {
        if readDescriptor >= 0 { close(readDescriptor) }
        if writeDescriptor >= 0 { close(writeDescriptor) }
    }

    func signal() {
        guard !signalled.exchange(true, ordering: .acquiringAndReleasing), writeDescriptor >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Empties the pipe, then lets the next signal write again. Always reads: a byte written by a
    /// signal that raced with the previous drain must not stay behind (the pipe would stay
    /// readable and the loop spin). Clearing the flag after reading can swallow a signal sent
    /// meanwhile, which is safe: the caller checks the loop's state after draining, and that
    /// signaller changed the state before signalling. Clearing it before reading was not safe:
    /// reading could consume the byte of a signal that set the flag again, leaving the flag set
    /// with an empty pipe, so every later signal was skipped (a lost wake-up).
    func drain() {
        guard readDescriptor >= 0 else { return }
        var buffer = (UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
        signalled.store(false, ordering: .releasing)
    }

    /// Sleeps until signalled or `nanoseconds` passed (nil: until signalled).
    func wait(nanoseconds: UInt64?) {
        let timeout = nanoseconds.map { Int64(min($0, UInt64(Int64.max))) } ?? -1
        if readDescriptor < 0 {
            if timeout > 0 { usleep(UInt32(min(timeout / 1000, 1_000_000))) }
            return
        }
        _ = bk_loop_wait_readable(readDescriptor, timeout)
    }
}
