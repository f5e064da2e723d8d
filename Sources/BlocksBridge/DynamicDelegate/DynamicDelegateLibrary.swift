
/// A2DynamicDelegate, NSObject+A2DynamicDelegate and NSObject+A2BlockDelegate for Lua.
///
/// `bk.protocol` declares a delegate protocol; `dynamicDelegate(obj)` gives the one delegate of
/// `obj` for it, whose methods call the block implementing them, else the real delegate, else
/// answer the protocol's default. `registerDynamicDelegate` / `linkDelegateMethods` put that
/// delegate behind `obj.delegate` and `obj.bk_xxxBlock` on Lua classes.
extension BKLibrary {
    public static let dynamicDelegates = BKLibrary(name: "DynamicDelegates", functions: [
        // protocol(name [, methods]): declares (or, without methods, looks up) a protocol.
        BKFunction("protocol") { stack throws(LuaRaise) in
            let name = try stack.checkString(1)
            if stack.isNoneOrNil(2) {
                guard let proto = DynamicDelegateStore.registeredProtocol(named: name, in: stack) else {
                    throw .argument(1, "unknown protocol '\(name)'")
                }
                stack.push(object: proto)
                return 1
            }
            try stack.checkTable(2)
            let proto = try DelegateProtocol.parse(name: name, methods: 2, in: stack)
            DynamicDelegateStore.register(proto, in: stack)
            stack.push(object: proto)
            return 1
        },
        BKFunction("dynamicDelegate") { stack throws(LuaRaise) in
            try DelegateFunctions.pushDefaultDelegate(stack, property: "delegate")
            return 1
        },
        BKFunction("dynamicDataSource") { stack throws(LuaRaise) in
            try DelegateFunctions.pushDefaultDelegate(stack, property: "dataSource")
            return 1
        },
        BKFunction("dynamicDelegateForProtocol") { stack throws(LuaRaise) in
            try DelegateFunctions.checkObject(stack, at: 1)
            let proto = try DynamicDelegateStore.checkProtocol(stack, at: 2)
            try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: proto)
            return 1
        },
        // implementMethod(dd, name, f)
        BKFunction("implementMethod") { stack throws(LuaRaise) in
            let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
            let name = try DelegateFunctions.checkMethod(stack, meta: meta, at: 2)
            try stack.checkFunction(3)
            DynamicDelegateStore.setBlock(stack, delegate: 1, meta: meta, name: name, block: 3)
            return 0
        },
        BKFunction("removeBlockImplementationForMethod") { stack throws(LuaRaise) in
            let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
            let name = SelectorName.methodName(try stack.checkString(2))
            stack.pushNil()
            DynamicDelegateStore.setBlock(stack, delegate: 1, meta: meta, name: name, block: -1)
            return 0
        },
        BKFunction("blockImplementationForMethod") { stack throws(LuaRaise) in
            let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
            let name = SelectorName.methodName(try stack.checkString(2))
            stack.rawGet(meta, field: "blocks")
            stack.rawGet(-1, field: name)
            return 1
        },
        // respondsToSelector(dd, name): a block or the real delegate implements the method.
        BKFunction("respondsToSelector") { stack throws(LuaRaise) in
            let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
            let selector = try stack.checkString(2)
            guard let proto = DynamicDelegateStore.delegateProtocol(stack, meta: meta),
                  let (name, _) = proto.method(selector) else {
                stack.push(false)
                return 1
            }
            stack.rawGet(meta, field: "blocks")
            if stack.rawGet(-1, field: name) != .nil {
                stack.push(true)
                return 1
            }
            stack.rawGet(meta, field: "weak")
            let real = stack.top + 1
            switch stack.rawGet(-1, field: "real") {
            case .table, .userdata: break
            default:
                stack.push(false)
                return 1
            }
            try DelegateFunctions.pushIndex(stack, object: real, key: name)
            stack.push(stack.type(at: -1) != .nil)
            return 1
        },
        BKFunction("registerDynamicDelegate") { stack throws(LuaRaise) in
            try ClassRegistration.registerDynamicDelegate(stack)
            return 0
        },
        BKFunction("linkDelegateMethods") { stack throws(LuaRaise) in
            try ClassRegistration.linkDelegateMethods(stack)
            return 0
        },
        BKFunction("XMLParser") { stack throws(LuaRaise) in
            _ = try stack.checkString(1)
            XMLParserObject.push(XMLParserObject(data: stack.stringBytes(1) ?? []), on: stack)
            return 1
        },
    ], setUp: { stack, module in
        DynamicDelegateStore.setUp(stack, module: module)
    })
}

/// Argument handling shared by the functions above.
enum DelegateFunctions {
    /// An object that can have delegates: a table or a userdata.
    static func checkObject(_ stack: LuaStack, at index: Int32) throws(LuaRaise) {
        switch stack.type(at: index) {
        case .table, .userdata: return
        default: throw .type(index, expected: "table or userdata")
        }
    }

    static func pushDefaultDelegate(_ stack: LuaStack, property: String) throws(LuaRaise) {
        try checkObject(stack, at: 1)
        guard let proto = DynamicDelegateStore.defaultProtocol(stack, object: 1, property: property) else {
            throw .argument(1, "no \(property) protocol known for this object "
                + "(use registerDynamicDelegate or dynamicDelegateForProtocol)")
        }
        try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: proto)
    }

    /// The method name at `index` (a name or a selector), which must be in the delegate's protocol.
    static func checkMethod(_ stack: LuaStack, meta: Int32, at index: Int32) throws(LuaRaise) -> String {
        let selector = try stack.checkString(index)
        guard let proto = DynamicDelegateStore.delegateProtocol(stack, meta: meta) else { return selector }
        guard let (name, _) = proto.method(selector) else {
            throw .argument(index, "'\(selector)' is not a method of protocol '\(proto.name)'")
        }
        return name
    }

    /// Pushes `object[key]` with metamethods, through the Lua half in protected mode.
    static func pushIndex(_ stack: LuaStack, object: Int32, key: String) throws(LuaRaise) {
        let object = stack.absolute(object)
        let handler = stack.pushMessageHandler()
        DynamicDelegateStore.pushStore(stack)
        do { try DynamicDelegateStore.pushHelpers(stack, store: -1) } catch { stack.top = handler - 1; throw error }
        guard stack.rawGet(-1, field: "index") == .function else {
            stack.top = handler - 1
            throw .message("dynamic delegates are unavailable in this state")
        }
        stack.pushCopy(of: object)
        stack.push(key)
        try stack.callBlock(arguments: 2, results: 1, handler: handler)
        stack.replace(at: handler)
        stack.top = handler
    }
}
