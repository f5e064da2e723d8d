/// The metamethods every dynamic delegate shares. `__index` runs once per method name: it makes the
/// method's dispatcher and caches it as a raw field, so later calls never come back here.
enum DelegateMetamethods {
    static func index(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        guard let key = stack.stringValue(2) else { return 0 }
        let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
        switch key {
        case "realDelegate":
            stack.rawGet(meta, field: "weak")
            stack.rawGet(-1, field: "real")
            return 1
        case "protocol":
            stack.rawGet(meta, field: "protocol")
            return 1
        default: break
        }
        DynamicDelegateStore.pushStore(stack)
        stack.rawGet(-1, field: "api")
        if stack.rawGet(-1, field: key) == .function { return 1 }
        stack.top = meta
        guard let proto = DynamicDelegateStore.delegateProtocol(stack, meta: meta) else { return 0 }
        guard let (name, method) = proto.method(key) else {
            throw .message("'\(key)' is not a method of protocol '\(proto.name)'")
        }
        try DynamicDelegateStore.pushDispatcher(stack, delegate: 1, meta: meta, key: key, name: name, method: method)
        return 1
    }

    static func newIndex(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
        let key = stack.stringValue(2) ?? stack.typeName(at: 2)
        guard key == "realDelegate" else {
            throw .message("cannot set field '\(key)' of \(DynamicDelegateStore.typeName) (use implementMethod)")
        }
        try DynamicDelegateStore.setRealDelegate(stack, delegate: 1, meta: meta, value: 3)
        return 0
    }

    static func toString(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let meta = try DynamicDelegateStore.checkDelegate(stack, at: 1)
        let name = DynamicDelegateStore.delegateProtocol(stack, meta: meta)?.name ?? "?"
        let address = UInt(bitPattern: stack.toPointer(1))
        stack.push("\(DynamicDelegateStore.typeName) (\(name)): 0x" + String(address, radix: 16))
        return 1
    }
}
