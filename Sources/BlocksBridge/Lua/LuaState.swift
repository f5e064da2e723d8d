import CLua
import CLuaShim

/// An owning Lua state with the bridge installed: `require "bk"` works in it.
///
/// Thread-safe through its host entry points (`run`, `call`, `setGlobal`, `global`, `LuaRef`'s
/// calls and release, `installGlobals`, `extensionObject`): each takes `lock`, so Lua code of the
/// state runs on one thread at a time. The stack-level API (`stack`, `LuaStack`) needs `lock` held.
public final class LuaState {
    /// The main thread's `lua_State *`: for the Lua plumbing (`Lua/`) and bklua, not for hosts,
    /// which use the typed API (`stack`, `run`, `call`, ...).
    @usableFromInline package let L: OpaquePointer
    let runtime: UnsafeMutablePointer<bk_runtime>
    /// Owns `runtime`; shared with interrupt handles, which may outlive the state.
    let runtimeStorage: LuaRuntimeStorage
    private let ownsState: Bool
    /// Per-state objects of the helper families (the loop, observation tables, ...), by type.
    /// Guarded by `extensionsLock` (`eventLoop` is looked up from any thread), except in deinit,
    /// when no other thread can reach the state.
    private var extensions: [ObjectIdentifier: AnyObject] = [:]
    private let extensionsLock = PlainLock()
    /// The one queue of registry slots released where they could not be freed at once (`LuaRef`s
    /// dropped while another thread held the lock, dropped `RegistrySlot`s).
    var releases: RegistryReleaseQueue { runtimeStorage.releases }
    /// Why the value being pushed could not go into Lua as it is (guarded by `lock`).
    let pushFailures = PushFailures()
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
        try lock.withLock { () throws(LuaError) in
            let status = bk_openlibs(L)
            if status != LUA_OK { throw stack.popError(status: status) }
        }
    }

    deinit {
        // From here on no exported function runs (finalizers calling bk get a Lua error), so
        // nothing reaches the extensions (the loop) once they are gone.
        lock.lock()
        // The last reports, while bk still answers: failed tasks no one awaited (a borrowed
        // state's tasks report from their own finalizers, before the anchor's).
        if ownsState { TaskEngine.reportUnawaitedFailures(on: activeStack) }
        runtimeStorage.advance(to: .closing)
        for object in extensions.values { (object as? LuaStateExtension)?.stateWillClose() }
        let close = { [L, ownsState, runtimeStorage, extensions] in
            if ownsState { lua_close(L) }
            withExtendedLifetime((runtimeStorage, extensions)) {}
        }
        extensions.removeAll()
        if lock.isHeldByEnclosingFrame {
            // The last reference went inside a frame of this state on this thread (a block the
            // loop runs dropped it): that frame, and Lua code under it, still use `L`. The state
            // closes when the outermost of them releases the lock; this object is gone before.
            runtimeStorage.advance(to: .closed)
            lock.runWhenReleased(close)
        } else {
            close()
            runtimeStorage.advance(to: .closed)
        }
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

    // MARK: Per-state extensions

    /// The state's single instance of `type`, created by `make` on first use. Any thread may ask.
    public func extensionObject<T: AnyObject>(_ type: T.Type, make: () -> T) -> T {
        let key = ObjectIdentifier(type)
        if let existing = extensionsLock.withLock({ extensions[key] }) as? T { return existing }
        // First use: made under the state lock, so two threads never make two (a loop records the
        // thread that made it). The lock is recursive, so `make` may look up other extensions.
        return lock.withLock {
            if let existing = extensionsLock.withLock({ extensions[key] }) as? T { return existing }
            let created = make()
            extensionsLock.withLock { extensions[key] = created }
            return created
        }
    }

    /// The state's instance of `type` if one was made (never creates it).
    func existingExtensionObject<T: AnyObject>(_ type: T.Type) -> T? {
        extensionsLock.withLock { extensions[ObjectIdentifier(type)] } as? T
    }

    // MARK: References

    /// Releases a `LuaRef`'s registry slot, from any thread: at once when this thread holds the
    /// lock or can take it without waiting, else at the next safe point (see `RegistryReleaseQueue`).
    func release(registryRef id: Int32) {
        guard id >= 0 else { return }
        guard lock.tryLock() else {
            releases.enqueue(id)
            return
        }
        defer { lock.unlock() }
        let s = activeStack
        guard s.ensureSpace(1) else {
            releases.enqueue(id)
            return
        }
        s.freeRegistrySlot(id)
        releases.drain(on: s)
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
    // Sendable: other threads only reach it through bk_interrupt, an atomic store, and `wakers`.
    let pointer: UnsafeMutablePointer<bk_runtime>
    /// The waits an interrupt must cut short.
    let wakers = InterruptWakers()
    /// The state's one release queue: slots dropped after the state may still reach it.
    let releases: RegistryReleaseQueue

    init() {
        pointer = UnsafeMutablePointer<bk_runtime>.allocate(capacity: 1)
        pointer.initialize(to: bk_runtime())
        bk_runtime_init(pointer)
        releases = RegistryReleaseQueue(runtime: pointer)
    }

    deinit {
        bk_runtime_destroy(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
