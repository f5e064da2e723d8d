import Synchronization
/// The profiler's link to a state: the run sampling it, so the workers and pool states it starts
/// join that run, and its own target, let go before the state closes.
final class ProfilerLink: LuaStateExtension {
    // Read by the thread holding the state's lock only (workers and pool jobs are started there).
    var session: ProfileSession?
    var target: ProfileTarget?
    /// The state's main stack (the state itself is being deinitialized in `stateWillClose`).
    var stack: LuaStack?
    /// The state's key in `ProfiledStates.runs` while a run samples it.
    var key: ObjectIdentifier?

    func stateWillClose() {
        if let key { _ = ProfiledStates.runs.withLock { $0.removeValue(forKey: key) } }
        _ = session?.finish()  // a run still going ends with its state (its sampler stops)
        if let stack { target?.detach(on: stack) }
        target = nil
        session = nil
    }
}

/// The runs `beginProfiling` started, by state, for `endProfiling` on a thread that cannot take
/// the state's lock.
enum ProfiledStates {
    static let runs = Mutex<[ObjectIdentifier: ProfileSession]>([:])
}

extension LuaState {
    /// Samples the Lua stacks this state runs while `body` runs on this thread (by CPU time, `rate`
    /// samples per second of it; the tasks it runs, the workers and pool states it starts meanwhile
    /// too), and returns the profile: `folded` stacks, an interactive flame graph `svg`, the
    /// functions with the most samples. Code run on other threads is not sampled, nor is a state
    /// profiled already (the returned profile is then empty).
    /// - Throws: what `body` throws (the profile is then lost).
    public func profile<E: Error>(rate: Int = LuaProfile.defaultRate, _ body: () throws(E) -> Void) throws(E) -> LuaProfile {
        let started = beginProfiling(rate: rate)
        do {
            try body()
        } catch {
            _ = endProfiling()
            throw error
        }
        guard started, let profile = endProfiling() else { return LuaProfile(rate: rate, stacks: [:], samplesOutsideLua: 0) }
        return profile
    }

    /// Starts sampling this state on this thread (bklua's `--profile`); false when it is profiled
    /// already or the sampler cannot start.
    package func beginProfiling(rate: Int = LuaProfile.defaultRate, label: String = "") -> Bool {
        lock.withLock {
            let link = extensionObject(ProfilerLink.self) { ProfilerLink() }
            guard link.session == nil, let session = ProfileSession(rate: rate) else { return false }
            link.stack = stack
            link.session = session
            link.target = session.attach(stack, label: label)
            link.key = ObjectIdentifier(self)
            ProfiledStates.runs.withLock { $0[ObjectIdentifier(self)] = session }
            return true
        }
    }

    /// Stops the run `beginProfiling` started and returns its profile (nil when none runs). After
    /// `os.exit` closed the state from inside Lua, only the run is stopped. With `waitingForLock`
    /// false and another thread holding the state's lock (bklua's exit handler, run by a worker's
    /// `os.exit` while the main code runs Lua), the run stops without waiting for it: the state
    /// stays attached and records nothing more, as the process is ending.
    package func endProfiling(waitingForLock: Bool = true) -> LuaProfile? {
        let run = ProfiledStates.runs.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
        if waitingForLock { lock.lock() } else if !lock.tryLock() { return run?.finish() }
        defer { lock.unlock() }
        guard let link = existingExtensionObject(ProfilerLink.self), let session = link.session else { return nil }
        let profile = session.finish()
        if runtimeStorage.life == .open { link.target?.detach(on: stack) }
        link.target = nil
        link.session = nil
        return profile
    }

    /// The run sampling this state, for the workers and pool states it starts (its lock is held).
    var profileSession: ProfileSession? {
        existingExtensionObject(ProfilerLink.self)?.session
    }
}
