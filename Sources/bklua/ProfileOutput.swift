import BlocksBridge
import CEdit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `--profile[=FILE]`: starts the profiler before the first chunk runs and, however the run ends
/// (its end, an error, `os.exit`, SIGINT or SIGTERM), writes the profile to FILE and its summary
/// to stderr once.
enum ProfileOutput {
    static let defaultFile = "bklua-profile.svg"

    /// The run being profiled. Set and read on bklua's main thread only (and in its exit handler,
    /// which `exit` runs on the thread that called it: the one running Lua, or a worker's).
    nonisolated(unsafe) private static var current: (state: LuaState, file: String, thread: pthread_t)?
    /// Held while the profile is written: a signal's thread and the run's end (or an exit) may
    /// finish at once, and the process must not end by the signal while the other writes.
    private static let finishing = Mutex(())
    /// The descriptor the SIGINT and SIGTERM handler writes the signal's number to.
    nonisolated(unsafe) private static var terminations: Int32 = -1

    /// Starts sampling `state`; false (with a message) when the sampler cannot start.
    static func begin(state: LuaState, file: String, rate: Int) -> Bool {
        guard state.beginProfiling(rate: rate) else {
            StandardStreams.writeError("bklua: cannot start the profiler\n")
            return false
        }
        current = (state, file, pthread_self())
        atexit { ProfileOutput.finish() }  // os.exit: the script never returns to main
        watchTermination()
        return true
    }

    /// SIGINT (Ctrl-C) and SIGTERM, the usual ways to stop a profiled server loop, end the run as
    /// its end does (the profile written and summed up), then the process by that signal (a shell
    /// sees 130 or 143), as lua.c's Ctrl-C has no loop to stop here. A thread of its own waits for
    /// them: the handler only writes to a pipe.
    private static func watchTermination() {
        terminations = cedit_watch_termination()
        guard terminations >= 0 else { return }
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { _ in
            var signal: UInt8 = 0
            while read(ProfileOutput.terminations, &signal, 1) != 1 {
                if errno != EINTR { return nil }
            }
            ProfileOutput.finish()
            cedit_end_by_signal(Int32(signal))
            return nil
        }, nil)
        if started == 0 { pthread_detach(thread) }
    }

    /// Stops the profiler and writes the file and the summary (once).
    static func finish() {
        finishing.withLock { _ in finishOnce() }
    }

    private static func finishOnce() {
        guard let (state, file, thread) = current else { return }
        current = nil
        // A worker's os.exit runs this on the worker's thread while the main code may hold the
        // state's lock running Lua: waiting for it would never end.
        guard let profile = state.endProfiling(waitingForLock: pthread_equal(thread, pthread_self()) != 0) else { return }
        let text = file.hasSuffix(".folded") ? profile.folded : profile.svg
        let summary = profile.report
        if write(text, to: file) {
            StandardStreams.writeError("bklua: profile written to \(file)\n" + summary)
        } else {
            StandardStreams.writeError("bklua: cannot write the profile to \(file): \(String(cString: strerror(errno)))\n" + summary)
        }
    }

    private static func write(_ text: String, to path: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        return fclose(file) == 0 && written == bytes.count
    }
}
