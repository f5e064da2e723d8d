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

    /// Empties the pipe; a signal sent after this starts a new wake-up.
    func drain() {
        guard signalled.exchange(false, ordering: .acquiringAndReleasing), readDescriptor >= 0 else { return }
        var buffer = (UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
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
