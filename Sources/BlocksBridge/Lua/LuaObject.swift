import CLua
import CLuaShim

/// How Lua sees instances of a Swift class: a userdata with methods (`obj:name(...)`, also
/// `obj:bk_name(...)`), properties (`obj.name`, `obj.name = v`) and metamethods.
public final class LuaClass: Sendable {
    /// The metatable's `__name` (used by type errors: "bk.Timer expected, got nil").
    public let name: String
    public let methods: [BKFunction]
    public let properties: [String: LuaProperty]
    /// Extra metamethods: `__tostring`, `__len`, `__call`, `__eq`, `__close`, ...
    public let metamethods: [BKFunction]
    /// `obj[i]` for an integer `i`: pushes the element and returns true, or returns false (nil).
    public let element: (@Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool)?
    /// Methods are looked up in Lua before the Swift `__index` runs (see `MethodLookup.swift`):
    /// for classes with properties whose methods scripts call in hot loops.
    let methodsFirst: Bool
    /// The type's module-qualified name (`String(reflecting:)`) for exported classes, which is
    /// what tells two classes of one Swift name apart; nil for hand-written classes.
    let qualifiedName: String?
    /// Where the metatable is cached in the registry: the type's identity for exported classes
    /// (two modules may each export an `Item`), the name for hand-written ones (`bk.Timer`).
    let registryKey: String

    public convenience init(name: String, methods: [BKFunction] = [], properties: [LuaProperty] = [],
                            metamethods: [BKFunction] = [],
                            element: (@Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool)? = nil) {
        self.init(name: name, methods: methods, properties: properties, metamethods: metamethods,
                  element: element, methodsFirst: false)
    }

    init(name: String, methods: [BKFunction] = [], properties: [LuaProperty] = [],
         metamethods: [BKFunction] = [],
         element: (@Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool)? = nil,
         methodsFirst: Bool, qualifiedName: String? = nil) {
        self.name = name
        self.qualifiedName = qualifiedName
        registryKey = qualifiedName.map { "bk.class " + $0 } ?? name
        self.methods = methods
        self.properties = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        self.metamethods = metamethods
        self.element = element
        self.methodsFirst = methodsFirst
    }
}

/// A Swift class whose instances can be pushed to Lua.
public protocol LuaBridged: AnyObject {
    static var luaClass: LuaClass { get }
}

/// A property of a bridged class. The getter pushes exactly one value.
public struct LuaProperty: Sendable {
    public let name: String
    let get: @Sendable (AnyObject, LuaStack) throws(LuaRaise) -> Void
    let set: (@Sendable (AnyObject, LuaStack, _ value: Int32) throws(LuaRaise) -> Void)?

    public static func readOnly<T: AnyObject>(
        _ name: String, _ get: @escaping @Sendable (T, LuaStack) throws(LuaRaise) -> Void
    ) -> LuaProperty {
        LuaProperty(name: name, get: { object, stack throws(LuaRaise) in
            guard let object = object as? T else { stack.pushNil(); return }
            try get(object, stack)
        }, set: nil)
    }

    public static func readWrite<T: AnyObject>(
        _ name: String,
        get: @escaping @Sendable (T, LuaStack) throws(LuaRaise) -> Void,
        set: @escaping @Sendable (T, LuaStack, _ value: Int32) throws(LuaRaise) -> Void
    ) -> LuaProperty {
        LuaProperty(name: name, get: { object, stack throws(LuaRaise) in
            guard let object = object as? T else { stack.pushNil(); return }
            try get(object, stack)
        }, set: { object, stack, value throws(LuaRaise) in
            guard let object = object as? T else { return }
            try set(object, stack, value)
        })
    }
}

/// The userdata block of a bridged object: a tag, then one retained reference to the Swift object.
///
/// The tag is what tells a bridged userdata from any other: scripts can give a userdata any
/// metatable (`debug.setmetatable`) or set any field of one, but never write its bytes, so a FILE
/// handle dressed as a `bk.Timer` is still not read as a Swift object.
struct BridgedObjectBlock {
    // Immutable: an address that nothing ever writes through, only compares.
    nonisolated(unsafe) static let tag: UnsafeRawPointer = {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        return UnsafeRawPointer(pointer)
    }()
    var tag: UnsafeRawPointer
    var object: Unmanaged<AnyObject>?
}

extension LuaStack {
    static let identityCacheKey = "bk.objects"

    /// Pushes `object` as a userdata of its class (its dynamic type's: a subclass's `luaClass`
    /// when it overrides it). The same object always gives the same userdata while Lua holds it,
    /// so identity (`==`, table keys) works across pushes.
    public func push<T: LuaBridged>(object: T) {
        let identity = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        pushIdentityCache()
        push(lightUserdata: identity)
        if rawGet(-2) == .userdata {
            remove(at: -2)
            return
        }
        pop()
        pushNewBridgedBlock(object)
        pushMetatable(for: Swift.type(of: object).luaClass)
        setMetatable(of: -2)
        push(lightUserdata: identity)
        pushCopy(of: -2)
        rawSet(-4)
        remove(at: -2)
    }

    /// Pushes `object` as a new userdata of its class, without the identity cache: for objects
    /// pushed exactly once (a handle returned by the call that made it), where keeping the cache
    /// entry would cost more than the object. Pushing it again makes a second, unequal userdata.
    public func push<T: LuaBridged>(newObject object: T) {
        pushNewBridgedBlock(object)
        pushMetatable(for: Swift.type(of: object).luaClass)
        setMetatable(of: -2)
    }

    /// Pushes a new userdata holding a retained `object` (no metatable yet).
    private func pushNewBridgedBlock(_ object: AnyObject) {
        let block = lua_newuserdatauv(L, MemoryLayout<BridgedObjectBlock>.size, 1)
        block?.bindMemory(to: BridgedObjectBlock.self, capacity: 1)
            .initialize(to: BridgedObjectBlock(tag: BridgedObjectBlock.tag, object: Unmanaged.passRetained(object)))
    }

    /// The block of the bridged userdata at `index`, recognised by its size and tag (never by a
    /// metatable field); nil for any other value.
    func bridgedBlock(at index: Int32) -> UnsafeMutablePointer<BridgedObjectBlock>? {
        guard lua_type(L, index) == LUA_TUSERDATA, lua_rawlen(L, index) == MemoryLayout<BridgedObjectBlock>.size,
              let raw = toUserdata(index) else { return nil }
        let block = raw.assumingMemoryBound(to: BridgedObjectBlock.self)
        return block.pointee.tag == BridgedObjectBlock.tag ? block : nil
    }

    /// The object at `index` if it is a userdata of `T`'s class, or of a subclass of `T`.
    public func toObject<T: LuaBridged>(_ type: T.Type, at index: Int32) -> T? {
        guard let block = bridgedBlock(at: index), pushMetatable(of: index) else { return nil }
        rawGet(LuaStack.registryIndex, field: T.luaClass.registryKey)  // no C string copy (the registry has no metatable)
        let matches = rawEqual(-1, -2)
        pop(2)
        guard matches else { return bridgedObject(at: index) as? T }  // a subclass's userdata
        return block.pointee.object?.takeUnretainedValue() as? T
    }

    /// The object at `index`, or a type error naming its class.
    public func checkObject<T: LuaBridged>(_ type: T.Type, at index: Int32) throws(LuaRaise) -> T {
        guard let object = toObject(type, at: index) else { throw .type(index, expected: className(of: T.luaClass)) }
        return object
    }

    /// The Swift object behind any bridged userdata at `index`, whatever its class.
    public func bridgedObject(at index: Int32) -> AnyObject? {
        bridgedBlock(at: index)?.pointee.object?.takeUnretainedValue()
    }

    private func pushIdentityCache() {
        if pushRegistryTable(Self.identityCacheKey) {
            // Weak values: the cache never keeps a userdata (or its Swift object) alive.
            pushNewTable()
            push("v")
            rawSet(-2, field: "__mode")
            setMetatable(of: -2)
        }
    }

    /// Pushes the metatable of `cls`, creating it on first use.
    public func pushMetatable(for cls: LuaClass) {
        if rawGet(LuaStack.registryIndex, field: cls.registryKey) == .table { return }
        pop()
        pushNewTable()
        let meta = top
        push(cls.name)
        rawSet(meta, field: "__name")
        if let qualifiedName = cls.qualifiedName { claimClassName(cls.name, qualifiedName, meta: meta) }
        push(false)
        rawSet(meta, field: "__metatable")

        pushNewTable(recordCount: Int32(cls.methods.count * 2))
        let methods = top
        for method in cls.methods {
            push(function: method.name, method.body)
            pushCopy(of: -1)
            rawSet(methods, field: method.name)
            rawSet(methods, field: "bk_" + method.name)
        }
        if cls.properties.isEmpty && cls.element == nil {
            rawSet(meta, field: "__index")  // plain table lookup: the VM's fast path
        } else {
            push(function: "__index") { stack throws(LuaRaise) in
                try LuaStack.indexBridged(stack, cls)
            }
            rawSet(meta, field: "__index")
            rawSet(meta, field: "methods")
            // The property names, sorted: what a debugger's variables view reads through `__index`.
            let names = cls.properties.keys.sorted()
            pushNewTable(arrayCount: Int32(clamping: names.count))
            for (i, name) in names.enumerated() {
                push(name)
                rawSet(-2, Int64(i + 1))
            }
            rawSet(meta, field: "__bkproperties")
            if cls.methodsFirst { lookUpMethodsFirst(meta: meta, className: cls.name) }
        }
        push(function: "__newindex") { stack throws(LuaRaise) in
            try LuaStack.newIndexBridged(stack, cls)
        }
        rawSet(meta, field: "__newindex")
        push(function: "__gc", runsAtClose: true) { stack in
            if let block = stack.bridgedBlock(at: 1) {
                let object = block.pointee.object
                block.pointee.object = nil
                object?.release()
            }
            return 0
        }
        rawSet(meta, field: "__gc")
        for metamethod in cls.metamethods {
            push(function: metamethod.name, metamethod.body)
            rawSet(meta, field: metamethod.name)
        }
        pushCopy(of: meta)
        rawSet(LuaStack.registryIndex, field: cls.registryKey)
    }

    static let classNamesKey = "bk.classnames"

    /// Messages name a class by its `__name`: the Swift name while one class of that name has a
    /// metatable in this state, the module-qualified name for each of them once two do
    /// (`Core.Item expected, got Meta.Item`). `registry["bk.classnames"][name]` holds the first
    /// class's qualified name, then `true` once the name is shared.
    private func claimClassName(_ name: String, _ qualifiedName: String, meta: Int32) {
        guard ensureSpace(3) else { return }
        _ = pushRegistryTable(Self.classNamesKey)
        let names = top
        defer { pop() }
        switch rawGet(names, field: name) {
        case .nil:
            pop()
            push(qualifiedName)
            rawSet(names, field: name)
            return
        case .string:
            let first = stringValue(-1) ?? ""
            pop()
            if rawGet(LuaStack.registryIndex, field: "bk.class " + first) == .table {
                push(first)
                rawSet(-2, field: "__name")
            }
            pop()
            push(true)
            rawSet(names, field: name)
        default:
            pop()
        }
        push(qualifiedName)
        rawSet(meta, field: "__name")
    }

    /// The name messages give `cls` in this state: its metatable's `__name` once it has one
    /// (qualified when two classes share the name), else its name.
    public func className(of cls: LuaClass) -> String {
        guard let qualifiedName = cls.qualifiedName, ensureSpace(2) else { return cls.name }
        defer { pop(2) }
        if rawGet(LuaStack.registryIndex, field: cls.registryKey) == .table {
            return rawGet(-1, field: "__name") == .string ? stringValue(-1) ?? cls.name : cls.name
        }
        // No metatable yet: qualified if another class of that name has one.
        pop()
        guard rawGet(LuaStack.registryIndex, field: Self.classNamesKey) == .table else { pushNil(); return cls.name }
        switch rawGet(-1, field: cls.name) {
        case .nil: return cls.name
        default: return stringValue(-1) == qualifiedName ? cls.name : qualifiedName
        }
    }

    private static func object(_ stack: LuaStack) -> AnyObject? {
        stack.bridgedObject(at: 1)
    }

    private static func indexBridged(_ stack: LuaStack, _ cls: LuaClass) throws(LuaRaise) -> Int32 {
        if let key = stack.stringValue(2), let property = cls.properties[key] {
            guard let object = object(stack) else { return 0 }
            try property.get(object, stack)
            return 1
        }
        if let element = cls.element, stack.type(at: 2) == .number, let i = stack.toInteger(2) {
            guard let object = object(stack), try element(object, stack, i) else { return 0 }
            return 1
        }
        guard stack.pushMetatable(of: 1), stack.rawGet(-1, field: "methods") == .table else { return 0 }
        stack.pushCopy(of: 2)
        stack.rawGet(-2)
        return 1
    }

    private static func newIndexBridged(_ stack: LuaStack, _ cls: LuaClass) throws(LuaRaise) -> Int32 {
        let key = stack.stringValue(2) ?? "?"
        guard let property = cls.properties[key] else {
            throw .message("cannot set field '\(key)' of \(cls.name)")
        }
        guard let set = property.set else {
            throw .message("field '\(key)' of \(cls.name) is read-only")
        }
        guard let object = object(stack) else { return 0 }
        // Set from code that can yield (a task): Lua observers run after the setter, from Lua.
        if lua_isyieldable(stack.L) != 0, let observable = object as? any LuaObservable {
            return try LuaObservers.setDeferringLuaObservers(observable.luaObservers, key: key, stack) {
                () throws(LuaRaise) in try set(object, stack, 3)
            }
        }
        try set(object, stack, 3)
        return 0
    }
}
