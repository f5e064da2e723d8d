
/// Typed entry points for hosts: run code and read globals as Swift values.
extension LuaState {
    /// The stack host calls use: the Lua thread running the innermost exported Swift function of
    /// this state on this OS thread (a registered closure calling back into Lua from a coroutine
    /// stays on that coroutine), else the main thread.
    @usableFromInline var activeStack: LuaStack {
        LuaStack.running(in: runtime) ?? stack
    }

    /// Every host call that enters Lua starts a fresh sandbox budget (instructions, time), unless
    /// it is made from inside Lua code of this state (it then shares that run's budget). It first
    /// frees the slots of references dropped on threads that could not take the lock.
    @usableFromInline func beginHostCall(on stack: LuaStack, startingBudget: Bool = true) {
        releases.drain(on: stack)
        if startingBudget { resetLimitsForOutermostRun() }
    }

    /// The frame of every host entry point: holds the state's lock (background blocks may be in
    /// Lua, other host threads may be in a call) from before the first touch of the stack until
    /// after the last result is read, works on the calling coroutine's stack with room for a few
    /// values, frees the slots of references dropped meanwhile on other threads, starts a fresh
    /// sandbox budget (unless it continues a call: `startingBudget` false) and restores the stack
    /// top when `body` returns or throws.
    @inlinable
    func withHostCall<R>(startingBudget: Bool = true, _ body: (LuaStack) throws(LuaError) -> R) throws(LuaError) -> R {
        lock.lock()
        defer { lock.unlock() }
        let s = try checkedActiveStack()
        beginHostCall(on: s, startingBudget: startingBudget)
        return try s.withRestoredTop { () throws(LuaError) -> R in try body(s) }
    }

    /// Runs a chunk of Lua code and returns all its results.
    /// - Throws: `LuaError` for a syntax or runtime error (message and traceback).
    @discardableResult
    public func run(_ code: String, name: String? = nil) throws(LuaError) -> [LuaValue] {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> [LuaValue] in
            let base = s.top
            try s.load(code, name: name ?? code)
            return try s.callTop(base: base)
        }
    }

    /// Runs a Lua file and returns all its results.
    /// - Throws: `LuaError` when the file cannot be read or loaded, or the chunk fails.
    @discardableResult
    public func runFile(_ path: String) throws(LuaError) -> [LuaValue] {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> [LuaValue] in
            let base = s.top
            try s.loadFile(path)
            return try s.callTop(base: base)
        }
    }

    /// Runs a chunk and returns its first result as `T` (`try state.run("return 1 + 1", as: Int.self)`).
    /// Lua errors throw `LuaError` (message and traceback); so does a result that does not convert.
    public func run<T: LuaConvertible>(_ code: String, name: String? = nil, as type: T.Type) throws(LuaError) -> T {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> T in
            try s.load(code, name: name ?? code)
            try s.call(arguments: 0, results: 1)
            return try s.convert(at: -1, to: T.self, what: "result")
        }
    }

    /// Runs a Lua file and returns its first result as `T`.
    public func runFile<T: LuaConvertible>(_ path: String, as type: T.Type) throws(LuaError) -> T {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> T in
            try s.loadFile(path)
            try s.call(arguments: 0, results: 1)
            return try s.convert(at: -1, to: T.self, what: "result")
        }
    }
}

extension LuaStack {
    /// The value at `index` as `T`, or a `LuaError` saying what did not convert.
    @inlinable func convert<T: LuaConvertible>(at index: Int32, to type: T.Type, what: String) throws(LuaError) -> T {
        if let value = T.read(from: self, at: index) { return value }
        throw LuaError(kind: .runtime,
                       message: "cannot convert \(what) to \(T.self) (\(T.luaTypeName) expected, got \(typeName(at: index)))")
    }
}
