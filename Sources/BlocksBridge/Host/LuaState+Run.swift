import CLua
import CLuaShim

/// Typed entry points for hosts: run code and read globals as Swift values.
extension LuaState {
    /// The stack host calls use: the Lua thread running the innermost exported Swift function of
    /// this state on this OS thread (a registered closure calling back into Lua from a coroutine
    /// stays on that coroutine), else the main thread.
    @usableFromInline var activeStack: LuaStack {
        if let current = bk_current_thread(runtime) { return LuaStack(current, runtime) }
        return stack
    }

    /// Every host call that enters Lua starts a fresh sandbox budget (instructions, time), unless
    /// it is made from inside Lua code of this state (it then shares that run's budget).
    @usableFromInline func beginHostCall() {
        resetLimitsForOutermostRun()
    }

    /// The frame of every host call into Lua: holds the state's lock (background blocks may be in
    /// Lua), works on the calling coroutine's stack with room for a few values, starts a fresh
    /// sandbox budget and restores the stack top when `body` returns or throws.
    @inlinable
    func withHostCall<R>(_ body: (LuaStack) throws(LuaError) -> R) throws(LuaError) -> R {
        lock.lock()
        defer { lock.unlock() }
        let s = try checkedActiveStack()
        beginHostCall()
        let base = s.top
        defer { s.top = base }
        return try body(s)
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

    // MARK: Globals (raw access: no metamethod of the global table runs)

    /// Sets the global `name` to `value` (a bridged object, a function, an array, ...).
    public func setGlobal(_ name: String, _ value: some LuaConvertible) {
        setGlobal(name) { value.push(on: $0) }
    }

    /// Sets the global `name` to the one value `push` pushes (raw: no metamethod runs).
    func setGlobal(_ name: String, pushing push: (LuaStack) -> Void) {
        lock.lock()  // background blocks may be in Lua: take the state first
        defer { lock.unlock() }
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        guard s.ensureSpace(3) else { return }
        s.pushGlobalTable()
        push(s)
        s.rawSet(-2, field: name)
    }

    /// The global `name` as `T`; throws when it does not convert (a missing global is nil).
    public func global<T: LuaConvertible>(_ name: String, as type: T.Type) throws(LuaError) -> T {
        lock.lock()  // background blocks may be in Lua: take the state first
        defer { lock.unlock() }
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        guard s.ensureSpace(2) else { throw LuaError(kind: .memory, message: "stack overflow") }
        s.pushGlobalTable()
        s.rawGet(-1, field: name)
        return try s.convert(at: -1, to: T.self, what: "global '\(name)'")
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
