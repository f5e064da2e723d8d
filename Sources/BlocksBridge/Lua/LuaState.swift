import CLua
import CLuaShim

/// An owning Lua state with the bridge installed: `require "bk"` works in it.
///
/// Not thread-safe: use a state from one thread at a time, or hold `lock` (the entries into Lua,
/// `run`, `call`, `callReportingErrors`, take it themselves).
public final class LuaState {
    /// The main thread's `lua_State *`.
    public let L: OpaquePointer
    let runtime: UnsafeMutablePointer<bk_runtime>
    /// Owns `runtime`; shared with interrupt handles, which may outlive the state.
    let runtimeStorage: LuaRuntimeStorage
    private let ownsState: Bool
    /// Per-state objects of the helper families (the loop, observation tables, ...), by type.
    private var extensions: [ObjectIdentifier: AnyObject] = [:]
    /// Taken around every entry into Lua, so background blocks never run Lua beside this thread.
    public let lock = StateLock()

    /// Creates a state with Lua's standard libraries (unless `standardLibraries` is false) and the
    /// `bk` module loadable with `require "bk"`. `memoryLimit` caps Lua's memory in bytes (0: none).
    public init(standardLibraries: Bool = true, memoryLimit: Int = 0) throws(LuaError) {
        let storage = LuaRuntimeStorage()
        let runtime = storage.pointer
        runtime.pointee.uses_bk_alloc = 1
        // The host is a Swift frame: its pushes never fail; Lua code runs (bk_pcall) at depth 0.
        runtime.pointee.swift_depth = 1
        guard let L = lua_newstate(bk_alloc, runtime) else {
            throw LuaError(kind: .memory, message: "not enough memory")
        }
        self.L = L
        self.runtime = runtime
        self.runtimeStorage = storage
        self.ownsState = true
        runtime.pointee.swift_state = Unmanaged.passUnretained(self).toOpaque()
        bk_setdefaulthandlers(L)
        BKModule.register(in: stack)
        if standardLibraries { try openStandardLibraries() }
        runtime.pointee.memory_limit = memoryLimit
    }

    /// A bridge state over a `lua_State` someone else made and will close (stock `lua5.4` loading
    /// `bk.so`): installs the `bk` module in it and owns nothing. `bk_alloc` is put in front of
    /// the state's own allocator (so Swift's allocations cannot fail), with no memory cap. The caller keeps this object alive as long as Lua may call `bk`.
    public convenience init(borrowing L: OpaquePointer) {
        // The state lives on after this object: `bk` functions still hold the runtime pointer,
        // so it is never freed.
        self.init(borrowing: L, storage: LuaRuntimeStorage())
    }

    /// `init(borrowing:)` with a runtime already made (bk.so adopts the allocator first).
    init(borrowing L: OpaquePointer, storage: LuaRuntimeStorage) {
        _ = Unmanaged.passRetained(storage)
        let runtime = storage.pointer
        // Swift runs here: allocations must not fail (bk_alloc in front of the state's allocator).
        bk_adopt_allocator(L, runtime)
        runtime.pointee.swift_depth = 1
        self.L = bk_mainthread(L) ?? L
        self.runtime = runtime
        self.runtimeStorage = storage
        self.ownsState = false
        runtime.pointee.swift_state = Unmanaged.passUnretained(self).toOpaque()
        // The interpreter runs Lua on this thread without asking for the lock: this thread holds
        // it for good, giving it up only while the event loop sleeps (so background blocks run then).
        lock.lock()
        BKModule.register(in: stack)
    }

    /// Opens Lua's standard libraries (for states created without them, e.g. to set
    /// `LUA_NOENV` first as `lua -E` does).
    public func openStandardLibraries() throws(LuaError) {
        let status = bk_openlibs(L)
        if status != LUA_OK { throw stack.popError(status: status) }
    }

    deinit {
        // From here on no exported function runs (finalizers calling bk get a Lua error), so
        // nothing reaches the extensions (the loop) once they are gone.
        lock.lock()
        runtime.pointee.closing = 1
        for object in extensions.values { (object as? LuaStateExtension)?.stateWillClose() }
        extensions.removeAll()
        if ownsState { lua_close(L) }
        runtime.pointee.swift_state = nil
        lock.unlock()
        // A borrowed state lives on; this thread held its lock for the interpreter (see init).
        if !ownsState, lock.isHeldByCurrentThread { lock.unlock() }
    }

    /// The main thread's stack.
    public var stack: LuaStack { LuaStack(L, runtime) }

    /// Bytes Lua has allocated (states created by the bridge only).
    public var memoryInUse: Int { runtime.pointee.bytes_in_use }

    /// The memory cap in bytes (0: none). Allocations made while Swift code runs may exceed it;
    /// the error is raised when control returns to Lua.
    public var memoryLimit: Int {
        get { runtime.pointee.memory_limit }
        set { runtime.pointee.memory_limit = newValue }
    }

    // MARK: Running code

    /// Runs a chunk of Lua code and returns its results.
    @discardableResult
    public func run(_ code: String, name: String? = nil) throws(LuaError) -> [LuaValue] {
        let s = stack
        let base = s.top
        try s.load(code, name: name ?? code)
        resetLimitsForOutermostRun()
        return try callChunk(base: base)
    }

    /// Runs a Lua file and returns its results.
    @discardableResult
    public func runFile(_ path: String) throws(LuaError) -> [LuaValue] {
        let s = stack
        let base = s.top
        try s.loadFile(path)
        resetLimitsForOutermostRun()
        return try callChunk(base: base)
    }

    private func callChunk(base: Int32) throws(LuaError) -> [LuaValue] {
        let s = stack
        try s.call(arguments: 0, results: LUA_MULTRET)
        defer { s.top = base }
        return (base + 1 ..< s.top + 1).map { s.value(at: $0) }
    }

    /// Adds every `bk.NAME` as the global `bk_NAME`, and `bk` itself as a global.
    public func installGlobals() {
        BKModule.installGlobals(in: stack)
    }

    // MARK: Per-state extensions

    /// The state's single instance of `type`, created by `make` on first use.
    public func extensionObject<T: AnyObject>(_ type: T.Type, make: () -> T) -> T {
        let key = ObjectIdentifier(type)
        if let existing = extensions[key] as? T { return existing }
        let created = make()
        extensions[key] = created
        return created
    }

    /// The state's instance of `type` if one was made (never creates it).
    func existingExtensionObject<T: AnyObject>(_ type: T.Type) -> T? {
        extensions[ObjectIdentifier(type)] as? T
    }

    // MARK: References

    func release(registryRef id: Int32) {
        if id >= 0 { luaL_unref(L, bk_registryindex(), id) }
    }
}

/// An extension object that must let go of what it holds (Lua references, objects that point back
/// to it) before its state closes.
public protocol LuaStateExtension: AnyObject {
    /// Called from the state's deinit, before `lua_close`.
    func stateWillClose()
}

/// The C runtime data of a state (allocator accounting, limits), freed when the state and every
/// interrupt handle are gone.
final class LuaRuntimeStorage: @unchecked Sendable {
    // Sendable: other threads only reach it through bk_interrupt, an atomic store.
    let pointer: UnsafeMutablePointer<bk_runtime>

    init() {
        pointer = UnsafeMutablePointer<bk_runtime>.allocate(capacity: 1)
        pointer.initialize(to: bk_runtime())
        bk_runtime_init(pointer)
    }

    deinit {
        bk_runtime_destroy(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
