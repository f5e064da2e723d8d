/// What a sandboxed `LuaState` lets a script do: how much memory it may hold, how many
/// instructions and how much wall-clock time each run may take, and which libraries it sees.
///
/// A limit that trips raises a plain Lua error ("not enough memory", "instruction limit exceeded",
/// "time limit exceeded", "interrupted"), thrown from `run` as a `LuaError`; the state stays usable
/// and the next `run` starts a fresh instruction and time budget.
public struct Sandbox: Sendable {
    /// Bytes Lua may have allocated in all (0: no cap). Allocation failure is a Lua
    /// "not enough memory" error; the host is never harmed.
    public var memoryLimit: Int
    /// Lua VM instructions per run (0: no budget). Checked every 1000 instructions.
    public var instructionLimit: Int
    /// Wall-clock time per run (nil: none). Checked every 1000 instructions, so time spent inside a
    /// single long C call (a huge `string.rep`, a blocking host function) is only seen afterwards.
    public var timeLimit: Duration?
    /// The safe library set instead of Lua's standard libraries: base without `dofile`/`loadfile`
    /// and with `load` of text chunks only and `setmetatable` refusing `__gc`; string, table,
    /// math, utf8, coroutine; `os.time/clock/date/difftime`; `require` of preloaded modules (and
    /// `bk`). No `io`, `debug`, `os.execute`, `package.loadlib`.
    public var safeLibraries: Bool

    public init(memoryLimit: Int = 0, instructionLimit: Int = 0, timeLimit: Duration? = nil,
                safeLibraries: Bool = true) {
        self.memoryLimit = memoryLimit
        self.instructionLimit = instructionLimit
        self.timeLimit = timeLimit
        self.safeLibraries = safeLibraries
    }

    /// Safe libraries, 64 MiB, 100 million instructions and 10 seconds per run.
    public static let standard = Sandbox(memoryLimit: 64 << 20, instructionLimit: 100_000_000,
                                         timeLimit: .seconds(10))
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
