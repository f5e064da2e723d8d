extension LuaState {
    /// Reports, through `bk.onError`, each failed task no one has awaited yet (a failure awaited
    /// later is never reported; a task collected unawaited reports itself). The state does this
    /// itself before it closes; bklua calls it once its loop has ended, before it picks its exit
    /// status.
    public func reportUnawaitedTaskFailures() {
        lock.withLock { TaskEngine.reportUnawaitedFailures(on: activeStack) }
    }
}
