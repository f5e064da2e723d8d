import CLuaShim

/// The per-state tables behind dynamic delegates, all in the registry table `bk.dd`:
///
/// - `objects`: weak keys, `obj -> {protocol name -> dd}`: one delegate per object and protocol,
///   never keeping the object alive (an ephemeron table: a block may even capture `obj`).
/// - `protocols`: `name -> bk.Protocol`.
/// - `classes`: weak keys, `metatable -> {getters, setters, protocols = {property -> name}}`: what
///   `registerDynamicDelegate` / `linkDelegateMethods` installed.
/// - `helpers` (the Lua chunk), `api` (methods of every delegate), `index` / `newindex` /
///   `tostring` (metamethods of every delegate), `weakValues` (`{__mode = "v"}`).
///
/// A dynamic delegate is a plain table: its raw fields are the cached dispatchers (one Lua closure
/// per method, made on first use), its own metatable holds `blocks`, `weak` (a weak-valued table
/// whose `real` is the real delegate) and `protocol`.
enum DynamicDelegateStore {
    static let registryKey = "bk.dd"
    static let marker = "bk.dd"
    static let typeName = "bk.DynamicDelegate"
    static let apiNames = ["implementMethod", "removeBlockImplementationForMethod",
                           "blockImplementationForMethod", "respondsToSelector"]

    /// Pushes `registry["bk.dd"]` and returns its index.
    @discardableResult
    static func pushStore(_ stack: LuaStack) -> Int32 {
        stack.pushRegistryTable(registryKey)
        return stack.top
    }

    /// Pushes `store[field]`, a table created on first use (weak-keyed if `weakKeys`).
    @discardableResult
    static func pushStoreTable(_ stack: LuaStack, _ field: String, weakKeys: Bool = false) -> Int32 {
        let store = pushStore(stack)
        if stack.rawGet(store, field: field) != .table {
            stack.pop()
            stack.pushNewTable()
            if weakKeys {
                stack.pushNewTable(recordCount: 1)
                stack.push("k")
                stack.rawSet(-2, field: "__mode")
                stack.setMetatable(of: -2)
            }
            stack.pushCopy(of: -1)
            stack.rawSet(store, field: field)
        }
        stack.remove(at: store)
        return stack.top
    }

    // MARK: Per-state set-up

    static func setUp(_ stack: LuaStack, module: Int32) {
        stack.withRestoredTop {
            let store = pushStore(stack)
            stack.pushNewTable(recordCount: 1)
            stack.push("v")
            stack.rawSet(-2, field: "__mode")
            stack.rawSet(store, field: "weakValues")

            stack.pushNewTable(recordCount: Int32(apiNames.count * 2))
            for name in apiNames {
                stack.rawGet(module, field: name)
                stack.pushCopy(of: -1)
                stack.rawSet(-3, field: name)
                stack.rawSet(-2, field: "bk_" + name)
            }
            stack.rawSet(store, field: "api")

            stack.push(function: "__index", DelegateMetamethods.index)
            stack.rawSet(store, field: "index")
            stack.push(function: "__newindex", DelegateMetamethods.newIndex)
            stack.rawSet(store, field: "newindex")
            stack.push(function: "__tostring", DelegateMetamethods.toString)
            stack.rawSet(store, field: "tostring")
        }
        // The Lua half loads at first use (pushHelpers): compiling it is a good part of a start.
    }

    /// Pushes the Lua half's table of helpers, compiling `DelegateChunk.lua` the first time.
    /// - Throws: the chunk's error, if it could not load (it is tried again next time).
    static func pushHelpers(_ stack: LuaStack, store: Int32) throws(LuaRaise) {
        let store = stack.absolute(store)
        if stack.rawGet(store, field: "helpers") == .table { return }
        stack.pop()
        // It gets `rawset` from here because it may load before the base library.
        do throws(LuaError) {
            try stack.load(bytes: DelegateChunk.source, name: "=bk/DelegateChunk.lua")
            stack.push(function: "rawset") { stack throws(LuaRaise) in
                try stack.checkTable(1)
                try stack.checkAny(2)
                stack.top = 3
                stack.rawSet(1)
                return 0
            }
            try stack.call(arguments: 1, results: 1)
        } catch {
            throw .message("dynamic delegates are unavailable in this state (\(error.message))")
        }
        guard stack.type(at: -1) == .table else {
            stack.pop()
            throw .message("dynamic delegates are unavailable in this state")
        }
        stack.pushCopy(of: -1)
        stack.rawSet(store, field: "helpers")
    }

    // MARK: Protocols

    static func register(_ proto: DelegateProtocol, in stack: LuaStack) {
        let protocols = pushStoreTable(stack, "protocols")
        stack.push(object: proto)
        stack.rawSet(protocols, field: proto.name)
        stack.pop()
    }

    /// The protocol registered as `name`; the bridge's own (`XMLParserDelegate`) is registered
    /// here, the first time it is asked for.
    static func registeredProtocol(named name: String, in stack: LuaStack) -> DelegateProtocol? {
        let protocols = pushStoreTable(stack, "protocols")
        stack.rawGet(protocols, field: name)
        let proto = stack.toObject(DelegateProtocol.self, at: -1)
        stack.pop(2)
        if proto == nil, name == XMLParserObject.protocolName { return XMLParserObject.registerProtocol(stack) }
        return proto
    }

    /// The protocol argument at `index`: a `bk.Protocol` or the name of a registered one.
    static func checkProtocol(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> DelegateProtocol {
        if let proto = stack.toObject(DelegateProtocol.self, at: index) { return proto }
        guard let name = stack.stringValue(index) else { throw .type(index, expected: "bk.Protocol") }
        guard let proto = registeredProtocol(named: name, in: stack) else {
            throw .argument(index, "unknown protocol '\(name)'")
        }
        return proto
    }

    /// The protocol of `obj`'s `property` ("delegate", "dataSource"): the one registered on its
    /// class with `registerDynamicDelegate`, else the protocol named after the metatable's `__name`
    /// (`UIAlertView` → `UIAlertViewDelegate`, `UITableView` → `UITableViewDataSource`).
    static func defaultProtocol(_ stack: LuaStack, object: Int32, property: String) -> DelegateProtocol? {
        return stack.withRestoredTop { () -> DelegateProtocol? in
            guard stack.pushMetatable(of: object) else { return nil }
            let meta = stack.top
            let classes = pushStoreTable(stack, "classes", weakKeys: true)
            stack.pushCopy(of: meta)
            if stack.rawGet(classes) == .table, stack.rawGet(-1, field: "protocols") == .table,
               stack.rawGet(-1, field: property) == .string, let name = stack.toString(-1),
               let proto = registeredProtocol(named: name, in: stack) {
                return proto
            }
            guard stack.rawGet(meta, field: "__name") == .string, let className = stack.toString(-1) else { return nil }
            let suffix = property.prefix(1).uppercased() + property.dropFirst()
            return registeredProtocol(named: className + suffix, in: stack)
        }
    }

    // MARK: Delegates

    /// Pushes the one dynamic delegate of the object at `object` for `proto`, creating it.
    static func pushDelegate(_ stack: LuaStack, object: Int32, protocol proto: DelegateProtocol) throws(LuaRaise) {
        let object = stack.absolute(object)
        switch stack.type(at: object) {
        case .table, .userdata: break
        default: throw .type(object, expected: "table or userdata")
        }
        let base = stack.top
        let objects = pushStoreTable(stack, "objects", weakKeys: true)
        stack.pushCopy(of: object)
        if stack.rawGet(objects) != .table {
            stack.pop()
            stack.pushNewTable()
            stack.pushCopy(of: object)
            stack.pushCopy(of: -2)
            stack.rawSet(objects)
        }
        let perObject = stack.top
        if stack.rawGet(perObject, field: proto.name) == .table, stack.pushMetatable(of: -1) {
            stack.rawGet(-1, field: "protocol")
            let same = stack.toObject(DelegateProtocol.self, at: -1) === proto
            stack.pop(2)
            if same {
                stack.replace(at: base + 1)
                stack.top = base + 1
                return
            }
        }
        stack.top = perObject
        pushNewDelegate(stack, protocol: proto)
        stack.pushCopy(of: -1)
        stack.rawSet(perObject, field: proto.name)
        stack.replace(at: base + 1)
        stack.top = base + 1
    }

    private static func pushNewDelegate(_ stack: LuaStack, protocol proto: DelegateProtocol) {
        let store = pushStore(stack)
        stack.pushNewTable()
        let delegate = stack.top
        stack.pushNewTable(recordCount: 10)
        let meta = stack.top
        for (field, key) in [("index", "__index"), ("newindex", "__newindex"), ("tostring", "__tostring")] {
            stack.rawGet(store, field: field)
            stack.rawSet(meta, field: key)
        }
        stack.push(typeName)
        stack.rawSet(meta, field: "__name")
        stack.push(typeName)
        stack.rawSet(meta, field: "__metatable")
        stack.push(true)
        stack.rawSet(meta, field: marker)
        stack.pushNewTable()
        stack.rawSet(meta, field: "blocks")
        stack.pushNewTable(recordCount: 1)
        stack.rawGet(store, field: "weakValues")
        stack.setMetatable(of: -2)
        stack.rawSet(meta, field: "weak")
        stack.push(object: proto)
        stack.rawSet(meta, field: "protocol")
        stack.setMetatable(of: delegate)
        stack.remove(at: store)
    }

    /// Checks that the value at `index` is a dynamic delegate; pushes its metatable and returns
    /// the metatable's index.
    static func checkDelegate(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Int32 {
        guard stack.type(at: index) == .table, stack.pushMetatable(of: index) else {
            throw .type(index, expected: typeName)
        }
        guard stack.rawGet(-1, field: marker) == .boolean else {
            stack.pop(2)
            throw .type(index, expected: typeName)
        }
        stack.pop()
        return stack.top
    }

    /// The protocol of a delegate whose metatable is at `meta`.
    static func delegateProtocol(_ stack: LuaStack, meta: Int32) -> DelegateProtocol? {
        stack.rawGet(meta, field: "protocol")
        defer { stack.pop() }
        return stack.toObject(DelegateProtocol.self, at: -1)
    }

    /// Pushes the dispatcher of method `key` of the delegate at `delegate` (metatable at `meta`):
    /// its cached raw field, or a new one made by the Lua half and cached under `key` and `name`.
    static func pushDispatcher(_ stack: LuaStack, delegate: Int32, meta: Int32, key: String,
                               name: String, method: DelegateProtocol.Method) throws(LuaRaise) {
        let delegate = stack.absolute(delegate), meta = stack.absolute(meta)
        if stack.rawGet(delegate, field: key) == .function { return }
        stack.pop()
        let handler = stack.pushMessageHandler()
        let store = pushStore(stack)
        do { try pushHelpers(stack, store: store) } catch { stack.top = handler - 1; throw error }
        guard stack.rawGet(-1, field: "make") == .function else {
            stack.top = handler - 1
            throw .message("dynamic delegates are unavailable in this state")
        }
        stack.rawGet(meta, field: "blocks")
        let blocks = stack.top
        stack.rawGet(meta, field: "weak")
        stack.push(name)
        if let value = method.defaultValue { value.push(on: stack) } else { stack.pushNil() }
        if let combine = method.combine { stack.push(combine.rawValue) } else { stack.pushNil() }
        if stack.rawGet(blocks, field: name) == .function, let count = stack.fixedParameterCount() {
            stack.push(count)
        } else {
            stack.top = blocks + 4
            stack.pushNil()
        }
        try stack.callBlock(arguments: 6, results: 1, handler: handler)
        stack.pushCopy(of: -1)
        stack.rawSet(delegate, field: name)
        if key != name {
            stack.pushCopy(of: -1)
            stack.rawSet(delegate, field: key)
        }
        stack.replace(at: handler)
        stack.top = handler
    }

    /// Drops the cached dispatchers of the delegate at `delegate` (its raw fields): they are
    /// specialised for its blocks and real delegate, so any change to those rebuilds them.
    static func invalidate(_ stack: LuaStack, delegate: Int32) {
        let delegate = stack.absolute(delegate)
        stack.pushNil()
        while stack.next(delegate) {
            stack.pop()
            stack.pushCopy(of: -1)
            stack.pushNil()
            stack.rawSet(delegate)
        }
    }

    /// Sets the block of method `name` (the value at `block`; nil removes it).
    static func setBlock(_ stack: LuaStack, delegate: Int32, meta: Int32, name: String, block: Int32) {
        let block = stack.absolute(block)
        stack.rawGet(meta, field: "blocks")
        stack.pushCopy(of: block)
        stack.rawSet(-2, field: name)
        stack.pop()
        invalidate(stack, delegate: delegate)
    }

    /// Sets the real delegate of the delegate at `delegate` (metatable at `meta`) to the value at
    /// `value`. The delegate itself as its own real delegate changes nothing.
    static func setRealDelegate(_ stack: LuaStack, delegate: Int32, meta: Int32, value: Int32) throws(LuaRaise) {
        switch stack.type(at: value) {
        case .nil, .none, .table, .userdata: break
        default: throw .message("a real delegate must be a table or userdata, got \(stack.typeName(at: value))")
        }
        if stack.rawEqual(value, delegate) { return }
        let value = stack.absolute(value)
        stack.rawGet(meta, field: "weak")
        stack.pushCopy(of: value)
        stack.rawSet(-2, field: "real")
        stack.pop()
        invalidate(stack, delegate: delegate)
    }
}
