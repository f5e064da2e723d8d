import BlocksBridge
#if canImport(Glibc)
import Glibc
#endif

/// `--profile[=FILE]`: starts the profiler before the first chunk runs and, however the run ends
/// (its end, an error, `os.exit`), writes the profile to FILE and its summary to stderr once.
enum ProfileOutput {
    static let defaultFile = "bklua-profile.svg"

    /// The run being profiled. Set and read on bklua's main thread only (and in its exit handler,
    /// which `exit` runs on the thread that called it: the one running Lua, or a worker's).
    nonisolated(unsafe) private static var current: (state: LuaState, file: String, thread: pthread_t)?

    /// Starts sampling `state`; false (with a message) when the sampler cannot start.
    static func begin(state: LuaState, file: String, rate: Int) -> Bool {
        guard state.beginProfiling(rate: rate) else {
            StandardStreams.writeError("bklua: cannot start the profiler\n")
            return false
        }
        current = (state, file, pthread_self())
        atexit { ProfileOutput.finish() }  // os.exit: the script never returns to main
        return true
    }

    /// Stops the profiler and writes the file and the summary (once).
    static func finish() {
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
