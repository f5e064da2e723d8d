import Foundation

/// A value shared by test threads, behind a pthread mutex (`NSLock`).
///
/// Not `Synchronization.Mutex`: on Linux it locks with futexes inside the toolchain's
/// uninstrumented library, so ThreadSanitizer does not see it order accesses and reports races on
/// the value it guards.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is touched only with `lock` held.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
