
/// Associated objects on Lua values (NSObject+BKAssociatedObjects).
///
/// One registry table per state, `bk.associations`, weak-keyed (`__mode = "k"`, an ephemeron
/// table): `object -> { key -> value }`. It never keeps an object alive, and an object's
/// associations go with it (even when a value refers back to the object). A weak association stores
/// its value in a box, a one-slot table with a weak-valued metatable (`__mode = "v"`), which reads
/// nil once the value is collected.
extension LuaStack {
    static let associationsKey = "bk.associations"
    static let weakBoxKey = "bk.weakbox"

    /// Objects that can carry associations: collectable reference values.
    func checkAssociationTarget(_ index: Int32) throws(LuaRaise) {
        switch type(at: index) {
        case .table, .userdata, .function, .thread: return
        default: throw .type(index, expected: "table, userdata, function or thread")
        }
    }

    /// A key: any value but nil and NaN (a table key cannot be either).
    func checkAssociationKey(_ index: Int32) throws(LuaRaise) {
        try checkAny(index)
        if type(at: index) == .nil { throw .argument(index, "key must not be nil") }
        if isNaN(index) { throw .argument(index, "key must not be NaN") }
    }

    /// Pushes the state's association registry, creating it on first use.
    func pushAssociations() {
        if pushRegistryTable(Self.associationsKey) {
            pushNewTable(recordCount: 1)
            push("k")
            rawSet(-2, field: "__mode")
            setMetatable(of: -2)
        }
    }

    /// Pushes the association table of the object at `object`; when it has none, pushes a new
    /// one (registered) if `create`, else nil. Returns whether a table was pushed.
    @discardableResult
    func pushAssociationTable(of object: Int32, create: Bool) -> Bool {
        let object = absolute(object)
        pushAssociations()
        pushCopy(of: object)
        if rawGet(-2) == .table {
            remove(at: -2)
            return true
        }
        pop()
        guard create else {
            pop()
            pushNil()
            return false
        }
        pushNewTable()
        pushCopy(of: object)
        pushCopy(of: -2)
        rawSet(-4)
        remove(at: -2)
        return true
    }

    /// Pushes a weak box holding the value at `value`.
    func pushWeakBox(holding value: Int32) {
        let value = absolute(value)
        pushNewTable(arrayCount: 1)
        if rawGet(LuaStack.registryIndex, field: Self.weakBoxKey) != .table {
            pop()
            pushNewTable(recordCount: 2)
            push("v")
            rawSet(-2, field: "__mode")
            push("bk.weakbox")
            rawSet(-2, field: "__name")
            pushCopy(of: -1)
            rawSet(LuaStack.registryIndex, field: Self.weakBoxKey)
        }
        setMetatable(of: -2)
        pushCopy(of: value)
        rawSet(-2, 1)
    }

    /// If the value on top is a weak box, replaces it with what it holds (nil once collected).
    func unboxWeakValue() {
        guard type(at: -1) == .table, pushMetatable(of: -1) else { return }
        rawGet(LuaStack.registryIndex, field: Self.weakBoxKey)
        let isBox = rawEqual(-1, -2)
        pop(2)
        if isBox {
            rawGet(-1, 1)
            remove(at: -2)
        }
    }

    /// How `associate` stores the value.
    enum AssociationPolicy { case strong, copy, weak }

    /// `object[key] = value` in the object's association table (value nil: removes the key).
    func associate(object: Int32, key: Int32, value: Int32, policy: AssociationPolicy) {
        let (object, key, value) = (absolute(object), absolute(key), absolute(value))
        if type(at: value) == .nil {
            if pushAssociationTable(of: object, create: false) {
                pushCopy(of: key)
                pushNil()
                rawSet(-3)
            }
            pop()
            return
        }
        pushAssociationTable(of: object, create: true)
        pushCopy(of: key)
        switch policy {
        case .strong: pushCopy(of: value)
        case .copy: if type(at: value) == .table { pushShallowCopy(of: value) } else { pushCopy(of: value) }
        case .weak: pushWeakBox(holding: value)
        }
        rawSet(-3)
        pop()
    }
}
