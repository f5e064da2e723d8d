import CLuaShim

/// One profiling run: the C sampler (`ProfilerSampler.c`) and the samples it hands over, from
/// every state it samples (the profiled state, its workers and its pool states, each on its own
/// thread). The C profiler is freed only once the run has finished and every state has let go of
/// it, so a worker still running when the run ends (or a state closed by `os.exit`) never reaches
/// freed memory.
final class ProfileSession: @unchecked Sendable {
    // Sendable: every field below is guarded by `lock`; the C profiler is thread-safe.
    let rate: Int
    private let lock = PlainLock()
    private var stacks: [String: Int] = [:]
    private var profiler: OpaquePointer?
    private var attached = 0
    private var finished = false

    /// Starts the sampler at `rate` samples per second of CPU time; nil when its thread cannot start.
    init?(rate: Int) {
        self.rate = max(1, min(rate, 100_000))
        let sink: bk_profile_sink = { context, stack, length, weight in
            guard let context, let stack else { return }
            let session = Unmanaged<ProfileSession>.fromOpaque(context).takeUnretainedValue()
            let text = String(decoding: UnsafeRawBufferPointer(start: stack, count: length), as: UTF8.self)
            session.record(text, weight: Int(weight))
        }
        // Unretained: the session lives until the C profiler is destroyed (`release`).
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let profiler = bk_profiler_start(1_000_000_000 / Int64(self.rate), sink, context) else { return nil }
        self.profiler = profiler
        _ = Unmanaged.passRetained(self)  // given back by `release` once nothing uses the profiler
    }

    private func record(_ stack: String, weight: Int) {
        lock.withLock { stacks[stack, default: 0] += weight }
    }

    /// Samples the state of `stack` on this thread (it runs the state and holds its lock) until
    /// `detach`; nil when the run has finished or the state is sampled already.
    func attach(_ stack: LuaStack, label: String) -> ProfileTarget? {
        let profiler: OpaquePointer? = lock.withLock {
            guard !finished, let profiler = self.profiler else { return nil }
            attached += 1
            return profiler
        }
        guard let profiler else { return nil }
        guard let target = stack.attachProfiler(profiler, label: label) else {
            letGo()
            return nil
        }
        return ProfileTarget(session: self, target: target)
    }

    fileprivate func detach(_ target: OpaquePointer, on stack: LuaStack) {
        stack.detachProfiler(target)
        letGo()
    }

    private func letGo() {
        let last: Bool = lock.withLock {
            attached -= 1
            return finished && attached == 0
        }
        if last { release() }
    }

    /// Stops sampling and returns what was recorded. States still attached (workers still
    /// running) record nothing more.
    func finish() -> LuaProfile {
        let (already, profiler) = lock.withLock { (finished, self.profiler) }
        if !already, let profiler { bk_profiler_stop(profiler) }
        let (stacks, outside, last): ([String: Int], Int, Bool) = lock.withLock {
            let first = !finished
            finished = true
            return (self.stacks, profiler.map { Int(bk_profiler_outside($0)) } ?? 0, first && attached == 0)
        }
        if last { release() }
        return LuaProfile(rate: rate, stacks: stacks, samplesOutsideLua: outside)
    }

    private func release() {
        let profiler: OpaquePointer? = lock.withLock {
            defer { self.profiler = nil }
            return self.profiler
        }
        guard let profiler else { return }
        bk_profiler_destroy(profiler)
        Unmanaged.passUnretained(self).release()
    }
}

/// A state being sampled: detach it on the thread that runs it, holding its lock, before it closes.
final class ProfileTarget {
    private let session: ProfileSession
    private var target: OpaquePointer?

    fileprivate init(session: ProfileSession, target: OpaquePointer) {
        self.session = session
        self.target = target
    }

    func detach(on stack: LuaStack) {
        guard let target else { return }
        self.target = nil
        session.detach(target, on: stack)
    }
}
