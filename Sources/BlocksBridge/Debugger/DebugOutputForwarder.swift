#if canImport(Glibc)
import Glibc
#endif

extension DebugSession {
    /// Sends what is written to `fd` (a pipe's read end: the script's stdout or stderr under
    /// `bklua --dap`) as `output` events of `category`, on a thread of its own, until the pipe's
    /// writers are gone. Returns a function that waits for that end.
    package func forwardOutput(from fd: Int32, category: String) -> @Sendable () -> Void {
        final class Done: @unchecked Sendable {
            let lock = ConditionLock()
            var finished = false
        }
        let done = Done()
        let started = startDetachedThread { [self] in
            var chunk = [UInt8](repeating: 0, count: 16384)
            var pending: [UInt8] = []
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                pending += chunk[0 ..< n]
                // Whole UTF-8 characters only: a character split between two reads waits for its end.
                var cut = pending.count
                var back = 0
                while back < 4, cut > 0, pending[cut - 1] & 0xC0 == 0x80 { cut -= 1; back += 1 }
                if cut > 0, pending[cut - 1] >= 0xC0 {
                    let lead = pending[cut - 1]
                    let needed = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
                    if back + 1 < needed { cut -= 1 } else { cut = pending.count }
                } else {
                    cut = pending.count
                }
                if cut > 0 {
                    output(String(decoding: pending[0 ..< cut], as: UTF8.self), category: category)
                    pending.removeFirst(cut)
                }
            }
            if !pending.isEmpty { output(String(decoding: pending, as: UTF8.self), category: category) }
            close(fd)
            done.lock.withLock {
                done.finished = true
                done.lock.broadcast()
            }
        }
        return {
            guard started else { return }
            done.lock.withLock { while !done.finished { done.lock.wait() } }
        }
    }
}
