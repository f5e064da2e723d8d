#if canImport(Glibc)
import Glibc
#endif

/// A Swift class whose `@LuaObserved` properties Lua and Swift can observe.
///
/// ```swift
/// final class Person: LuaObservable, LuaConvertible {   // LuaConvertible: lua.setGlobal("p", person)
///     let luaObservers = LuaObservers()
///     @LuaObserved("name") var name = ""
///     @LuaObserved("age") var age = 0
///
///     static let luaClass = LuaClass(
///         name: "Person",
///         methods: LuaObservers.methods,               // person:bk_addObserverForKeyPath(...)
///         properties: [.observable("name", \Person.name), .observable("age", \Person.age)])
/// }
///
/// // Lua: bk.addObserverForKeyPath(person, "name", {"new"}, function(p, change) ... end)
/// //      person.name = "Ada"          -- notifies Lua and Swift observers
/// // Swift: person.name = "Grace"       -- notifies them too
/// let token = person.luaObservers.observe("name") { change in print(change.new) }
/// ```
///
/// Lua observes a Swift object through its userdata: observations never keep it alive, and end
/// when Lua collects the userdata (no Lua reference to the object is left). Lua observers run with
/// the state's lock held; set one object's properties from one thread at a time. A set made while
/// the thread holds another state's lock (Lua code of another state, a shareable object set from
/// a worker) calls this state's observers at once if its lock is free, else on its loop's next
/// turn: no thread waits for a state while holding another.
public protocol LuaObservable: LuaBridged, SendableMetatype {
    var luaObservers: LuaObservers { get }
}

/// The Lua and Swift observers of one Swift object; the object owns it.
public final class LuaObservers {
    /// What a Swift observer receives: the property and its values before and after the set.
    public struct Change {
        public let key: String
        public let old: any LuaConvertible
        public let new: any LuaConvertible
    }

    private var swiftObservers: [(id: Int, key: String, handler: (Change) -> Void)] = []
    private var lastID = 0
    /// States whose Lua code observes this object (weak: an object never keeps a state alive).
    /// Guarded by `statesLock`: a state registers under its own lock, and a set on another thread
    /// (or from another state's Lua) reads the list holding no state's lock.
    private var states: [WeakState] = []
    private let statesLock = PlainLock()
    /// While Lua code that can yield (a task) sets a property of this object: the Lua observers of
    /// that property in that state are notified once the setter has returned, so that they may
    /// suspend the task (`setDeferringLuaObservers`). By setting thread (a shareable object is set
    /// from several states' threads at once), under `statesLock`.
    private var deferrals: [UInt: Deferral] = [:]

    private var deferral: Deferral? {
        get { statesLock.withLock { deferrals[UInt(pthread_self())] } }
        set { statesLock.withLock { deferrals[UInt(pthread_self())] = newValue } }
    }

    public init() {}

    /// Calls `handler` after every set of the property `key` (from Swift or Lua). Returns a token
    /// for `removeObserver`.
    @discardableResult
    public func observe(_ key: String, _ handler: @escaping (Change) -> Void) -> Int {
        lastID += 1
        swiftObservers.append((lastID, key, handler))
        return lastID
    }

    public func removeObserver(_ token: Int) {
        swiftObservers.removeAll { $0.id == token }
    }

    /// The functions of the Observation family, for a bridged class's `methods`, so that
    /// `obj:bk_addObserverForKeyPath(...)` works on its objects.
    public static var methods: [BKFunction] {
        let names: Set = ["addObserverForKeyPath", "addObserverForKeyPaths", "removeObserverForKeyPath",
                          "removeObserversWithIdentifier", "removeAllBlockObservers", "observers"]
        return BKLibrary.observation.functions.filter { names.contains($0.name) }
    }

    // MARK: Notifying

    func willChange<Owner: LuaObservable>(_ owner: Owner, key: String,
                                          old: any LuaConvertible, new: any LuaConvertible) {
        notifyLua(owner, key: key, old: old, new: new, isPrior: true)
    }

    func didChange<Owner: LuaObservable>(_ owner: Owner, key: String,
                                         old: any LuaConvertible, new: any LuaConvertible) {
        notifyLua(owner, key: key, old: old, new: new, isPrior: false)
        let change = Change(key: key, old: old, new: new)
        // A snapshot: a handler may add or remove observers.
        for observer in swiftObservers where observer.key == key {
            observer.handler(change)
        }
    }

    private func notifyLua<Owner: LuaObservable>(_ owner: Owner, key: String, old: any LuaConvertible,
                                                 new: any LuaConvertible, isPrior: Bool) {
        let observing: [LuaState] = statesLock.withLock {
            states.removeAll { $0.state == nil }
            return states.compactMap(\.state)
        }
        for state in observing {
            if state.lock.isHeldByCurrentThread || StateLock.heldByCurrentThread == 0 {
                deliver(owner, to: state, key: key, old: old, new: new, isPrior: isPrior)
                continue
            }
            // Rule 11: this thread holds another state's lock, and that state's thread may be
            // setting this object too, waiting for ours: never wait for it. Free, it is taken
            // without waiting; else the observers of `state` run on its loop's next turn.
            if state.lock.tryLock() {
                deliver(owner, to: state, key: key, old: old, new: new, isPrior: isPrior)
                state.lock.unlock()
                continue
            }
            let call = HandedOver(value: (owner, key, old, new, isPrior, WeakState(state: state)))
            // The loop exists: `register` made it (taking another state's lock to make it here
            // would nest).
            state.eventLoopIfMade?.perform {
                let (owner, key, old, new, isPrior, target) = call.value
                guard let state = target.state else { return }
                owner.luaObservers.deliver(owner, to: state, key: key, old: old, new: new, isPrior: isPrior,
                                           onLoop: true)
            }
        }
    }

    /// Calls the Lua observers of `key` in `state`, taking its lock (already held by this thread,
    /// or the only state lock it takes). `onLoop`: posted by another state's setter (the setter's
    /// `deferral` is not this thread's to read).
    private func deliver<Owner: LuaObservable>(_ owner: Owner, to state: LuaState, key: String, old: any LuaConvertible,
                                               new: any LuaConvertible, isPrior: Bool, onLoop: Bool = false) {
        // A property may be set on any thread: Lua is entered only with the state's lock.
        state.lock.lock()
        defer { state.lock.unlock() }
        // Set from Lua code of this state (a coroutine's, maybe), observers run on the Lua
        // thread running the setter on this OS thread, never on one that is not running.
        let stack = state.activeStack
        stack.withRestoredTop {
            guard stack.ensureSpace(10) else { return }
            // Only a userdata Lua still holds can have observations: never create one here.
            guard stack.pushExistingUserdata(of: owner) else { return }
            let object = stack.top
            guard stack.rawGet(LuaStack.registryIndex, field: ObservationEngine.registryKey) == .table else { return }
            if !isPrior, !onLoop, let deferral, deferral.key == key, deferral.state === state {
                deferral.changes.append((old, new))
                return
            }
            stack.rawGet(-1, field: "changed")
            stack.pushCopy(of: object)
            stack.push(key)
            old.push(on: stack)
            new.push(on: stack)
            stack.push(isPrior)
            // The engine reports task errors itself; this only fails on a bridge bug.
            stack.callReportingErrors(arguments: 5, results: 0)
        }
    }

    /// `obj.key = v` from Lua, for a Swift object (the userdata at 1): runs `set` (the Swift setter),
    /// then notifies this state's Lua observers of `key` from Lua, after this Swift frame is gone
    /// (the engine's `changedAfterSet`, continued with `BK_CONTINUE_CALL`), so that an observer
    /// called from a task may suspend it (rule 3). Prior notifications (before the value is stored)
    /// and other states' observers are not deferred; Swift observers run first, inside `set`.
    static func setDeferringLuaObservers(_ observers: LuaObservers, key: String, _ stack: LuaStack,
                                         _ set: () throws(LuaRaise) -> Void) throws(LuaRaise) -> Int32 {
        let current = Deferral(key: key, state: stack.state)
        let saved = observers.deferral
        observers.deferral = current
        do throws(LuaRaise) { try set() } catch {
            observers.deferral = saved
            throw error
        }
        observers.deferral = saved
        let changes = current.changes
        guard !changes.isEmpty else { return 0 }
        guard stack.ensureSpace(Int32(clamping: 2 * changes.count + 4)),
              stack.rawGet(LuaStack.registryIndex, field: ObservationEngine.registryKey) == .table
        else { throw .message("stack overflow") }
        stack.rawGet(-1, field: "changedAfterSet")
        stack.remove(at: -2)
        stack.pushCopy(of: 1)
        stack.push(key)
        for change in changes {
            change.old.push(on: stack)
            change.new.push(on: stack)
        }
        return stack.continueWithCall(arguments: Int32(2 + 2 * changes.count))
    }

    /// Called by the engine when Lua observes the userdata at `index`: true if it is an observable
    /// Swift object (its observers now notify this state).
    static func register(userdataAt index: Int32, in stack: LuaStack) -> Bool {
        guard let observable = stack.bridgedObject(at: index) as? any LuaObservable else { return false }
        let observers = observable.luaObservers
        let state = stack.state
        _ = state.eventLoop  // made now, holding this state: other states' sets post to it
        observers.statesLock.withLock {
            if !observers.states.contains(where: { $0.state === state }) {
                observers.states.append(WeakState(state: state))
            }
        }
        return true
    }
}

private struct WeakState {
    weak var state: LuaState?
}

/// The notifications a Lua set of a Swift property leaves for after its setter (see `deferral`).
private final class Deferral {
    let key: String
    unowned let state: LuaState
    var changes: [(old: any LuaConvertible, new: any LuaConvertible)] = []

    init(key: String, state: LuaState) {
        self.key = key
        self.state = state
    }
}

extension LuaStack {
    /// Pushes the userdata Lua already has for `object`; false (nothing pushed) when there is none.
    func pushExistingUserdata(of object: AnyObject) -> Bool {
        guard rawGet(LuaStack.registryIndex, field: LuaStack.identityCacheKey) == .table else {
            pop()
            return false
        }
        push(lightUserdata: UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()))
        if rawGet(-2) == .userdata {
            remove(at: -2)
            return true
        }
        pop(2)
        return false
    }
}

/// Declares an observable property of a `LuaObservable` class: every set, from Swift or from Lua
/// (through `LuaProperty.observable`), notifies the object's Lua and Swift observers.
/// The name is the key Lua observes: `@LuaObserved("name") var name = ""`.
@propertyWrapper
public struct LuaObserved<Value: LuaConvertible> {
    public let key: String
    private var value: Value

    public init(wrappedValue: Value, _ key: String) {
        self.key = key
        self.value = wrappedValue
    }

    @available(*, unavailable, message: "@LuaObserved is only for properties of LuaObservable classes")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    // The enclosing-instance form: the setter knows the object, so it can notify its observers
    // before (prior) and after the value is stored.
    public static subscript<Owner: LuaObservable>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, LuaObserved<Value>>
    ) -> Value {
        get { owner[keyPath: storageKeyPath].value }
        set {
            let key = owner[keyPath: storageKeyPath].key
            let old = owner[keyPath: storageKeyPath].value
            owner.luaObservers.willChange(owner, key: key, old: old, new: newValue)
            owner[keyPath: storageKeyPath].value = newValue
            owner.luaObservers.didChange(owner, key: key, old: old, new: newValue)
        }
    }
}

extension LuaProperty {
    /// A property Lua reads and writes as `obj.name`; writes go through the Swift setter, so an
    /// `@LuaObserved` property notifies its observers. A value of the wrong type is an error.
    public static func observable<T: LuaObservable, Value: LuaConvertible>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<T, Value>
    ) -> LuaProperty {
        nonisolated(unsafe) let keyPath = keyPath  // immutable after creation
        return .readWrite(name, get: { (object: T, stack: LuaStack) throws(LuaRaise) in
            try stack.push(returned: object[keyPath: keyPath], what: "value of field '\(name)'")
        }, set: { (object: T, stack: LuaStack, value: Int32) throws(LuaRaise) in
            guard let newValue = Value.read(from: stack, at: value) else {
                throw .message(badValue(name, of: T.self, Value.conversionProblem(stack, at: value)))
            }
            object[keyPath: keyPath] = newValue
        })
    }
}

extension LuaStack {
    /// For helpers that walk tables raw (`next`, `rawGet`, `rawLength`): the observed fields of
    /// an observed table are not in the table itself but in a store (so that writing them reaches
    /// `__newindex`). Pushes that store (a plain table: observed key -> value) and returns true
    /// when the table at `index` is observed; pushes nothing and returns false otherwise.
    public func pushObservedFields(of index: Int32) -> Bool {
        guard type(at: index) == .table, pushMetatable(of: index) else { return false }
        if rawGet(-1, field: ObservationEngine.storeField) == .table {
            remove(at: -2)
            return true
        }
        pop(2)
        return false
    }
}
