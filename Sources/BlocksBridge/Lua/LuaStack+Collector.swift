import CLua
import CLuaShim

/// The garbage collector, for code that must not run finalizers while it holds locks (rule 16).
extension LuaStack {
    /// Stops the collector (`bk_gc_pause`); pass the result to `resumeCollector`. [-0, +0]
    func pauseCollector() -> Int32 { bk_gc_pause(L) }

    /// Restarts what `pauseCollector` stopped, recording the work it put off. [-0, +0]
    func resumeCollector(_ paused: Int32) { bk_gc_resume(L, paused) }

    /// Does the collector work a pause put off, in a protected call (finalizers run): call it
    /// holding this state and no other lock (`bk_gc_settle`). [-0, +0]
    func settleCollector() { bk_gc_settle(L) }

    /// Switches the collector to generational mode (bklua's default, as lua.c's). [-0, +0]
    package func useGenerationalCollector() { _ = bk_gc_generational(L) }
}
