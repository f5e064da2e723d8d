import BlocksBridge
import CEdit
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C while code runs also stops the event loop: `bk.run()` waits in Swift, where the debug
/// hook cannot reach, so it returns and the hook then raises "interrupted!" in the command.
final class InterruptWatcher {
    private let source: DispatchSourceRead?

    init(loop: EventLoop) {
        let descriptor = cedit_interrupt_descriptor()
        guard descriptor >= 0 else {
            source = nil
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        source.setEventHandler {
            var bytes = (0, 0, 0, 0, 0, 0, 0, 0) as (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)
            let count = withUnsafeMutableBytes(of: &bytes) { read(descriptor, $0.baseAddress, $0.count) }
            // The last Ctrl-C's command: only while it still runs (the hook may have ended it).
            let last = withUnsafeBytes(of: &bytes) { count > 0 ? $0[count - 1] : 0 }
            if count > 0, cedit_interrupt_is_current(last) != 0 {
                loop.interrupt()
                Self.keepArmed(last)
            }
        }
        source.resume()
        self.source = source
    }

    deinit { source?.cancel() }

    /// The bridge's hook hub can replace the stop hook in the instant it reapplies its own (a script
    /// with debug.sethook, a sandbox's limits), and that Ctrl-C would be lost: until the stop hook
    /// fires or the command ends, it is set again where it went missing.
    private static func keepArmed(_ command: UInt8) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            if cedit_interrupt_rearm(command) != 0 { keepArmed(command) }
        }
    }
}
