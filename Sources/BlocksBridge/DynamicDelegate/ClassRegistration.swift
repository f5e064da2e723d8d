/// `registerDynamicDelegate` and `linkDelegateMethods` on Lua "classes" (NSObject+A2BlockDelegate).
///
/// Lua has no property swizzling; the equivalent is the metatable of the instances. A class `C`
/// with `C.__index == C` (the usual idiom: `setmetatable(obj, C)`) is that metatable; a table
/// with a table or function `__index` is taken as the instances' metatable too; any other table is
/// an object on its own and its own metatable is hooked. The hook (Lua half) answers the
/// registered properties first and sends every other key where it went before, so the class keeps
/// its methods and its own `__index` / `__newindex`.
enum ClassRegistration {
    // registerDynamicDelegate(class, protocol [, property = "delegate"])
    static func registerDynamicDelegate(_ stack: LuaStack) throws(LuaRaise) {
        try stack.checkTable(1)
        let proto = try DynamicDelegateStore.checkProtocol(stack, at: 2)
        let property = try stack.optString(3, default: "delegate") ?? "delegate"
        stack.top = 3
        let info = try pushClassInfo(stack, class: 1)
        stack.rawGet(info, field: "protocols")
        stack.push(proto.name)
        stack.rawSet(-2, field: property)
        stack.pop()

        // The protocol is looked up by name at each access (falling back to the one registered
        // now), so `obj.delegate` and `dynamicDelegate(obj)` agree after a protocol is redeclared.
        let name = proto.name
        stack.rawGet(info, field: "getters")
        stack.push(function: property) { stack throws(LuaRaise) in
            let current = DelegateProtocol.named(name, in: stack) ?? proto
            try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: current)
            return 1
        }
        stack.rawSet(-2, field: property)
        stack.rawGet(info, field: "setters")
        stack.push(function: property) { stack throws(LuaRaise) in
            let current = DelegateProtocol.named(name, in: stack) ?? proto
            try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: current)
            let delegate = stack.top
            _ = stack.pushMetatable(of: delegate)
            try DynamicDelegateStore.setRealDelegate(stack, delegate: delegate, meta: stack.top, value: 2)
            return 0
        }
        stack.rawSet(-2, field: property)
    }

    // linkDelegateMethods(class, {property = method, ...}): block properties backed by the
    // delegate's block implementations (the protocol registered for "delegate").
    static func linkDelegateMethods(_ stack: LuaStack) throws(LuaRaise) {
        try stack.checkTable(1)
        try stack.checkTable(2)
        stack.top = 2
        let info = try pushClassInfo(stack, class: 1)
        stack.rawGet(info, field: "protocols")
        guard stack.rawGet(-1, field: "delegate") == .string, let protoName = stack.toString(-1),
              let proto = DynamicDelegateStore.registeredProtocol(named: protoName, in: stack) else {
            throw .argument(1, "no delegate protocol registered for this class (call registerDynamicDelegate first)")
        }
        stack.pop(2)
        stack.rawGet(info, field: "getters")
        let getters = stack.top
        stack.rawGet(info, field: "setters")
        let setters = stack.top
        stack.pushNil()
        while stack.next(2) {
            guard let property = stack.stringValue(-2), let selector = stack.stringValue(-1) else {
                throw .argument(2, "expected property name = method name pairs")
            }
            guard let (name, _) = proto.method(selector) else {
                throw .argument(2, "'\(selector)' is not a method of protocol '\(proto.name)'")
            }
            stack.pop()
            stack.push(function: property) { stack throws(LuaRaise) in
                let current = DelegateProtocol.named(protoName, in: stack) ?? proto
                try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: current)
                _ = stack.pushMetatable(of: -1)
                stack.rawGet(-1, field: "blocks")
                stack.rawGet(-1, field: name)
                return 1
            }
            stack.rawSet(getters, field: property)
            stack.push(function: property) { stack throws(LuaRaise) in
                switch stack.type(at: 2) {
                case .nil, .function: break
                default: throw .type(2, expected: "function")
                }
                let current = DelegateProtocol.named(protoName, in: stack) ?? proto
                try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: current)
                let delegate = stack.top
                _ = stack.pushMetatable(of: delegate)
                DynamicDelegateStore.setBlock(stack, delegate: delegate, meta: stack.top, name: name, block: 2)
                return 0
            }
            stack.rawSet(setters, field: property)
        }
    }

    /// Pushes the hook record of the class at `index` (`{getters, setters, protocols}`), hooking
    /// the metatable on first use; returns its index.
    private static func pushClassInfo(_ stack: LuaStack, class index: Int32) throws(LuaRaise) -> Int32 {
        let classIndex = stack.absolute(index)
        let classes = DynamicDelegateStore.pushStoreTable(stack, "classes", weakKeys: true)
        // The metatable to hook: the class itself when it is one, else the object's own.
        let meta: Int32
        switch stack.rawGet(classIndex, field: "__index") {
        case .table, .function:
            stack.pop()
            stack.pushCopy(of: classIndex)
            meta = stack.top
        default:
            stack.pop()
            if !stack.pushMetatable(of: classIndex) {
                stack.pushNewTable()
                stack.pushCopy(of: -1)
                stack.setMetatable(of: classIndex)
            }
            meta = stack.top
        }
        stack.pushCopy(of: meta)
        if stack.rawGet(classes) == .table { return stack.top }
        stack.pop()

        let handler = stack.pushMessageHandler()
        DynamicDelegateStore.pushStore(stack)
        try DynamicDelegateStore.pushHelpers(stack, store: -1)
        guard stack.rawGet(-1, field: "hook") == .function else {
            throw .message("dynamic delegates are unavailable in this state")
        }
        let hook = stack.top
        stack.pushNewTable(recordCount: 3)
        let info = stack.top
        for field in ["getters", "setters", "protocols"] {
            stack.pushNewTable()
            stack.rawSet(info, field: field)
        }
        stack.pushCopy(of: hook)
        stack.pushCopy(of: meta)
        stack.rawGet(info, field: "getters")
        stack.rawGet(info, field: "setters")
        let index = stack.rawGet(meta, field: "__index")
        stack.push(index == .function)
        let newIndex = stack.rawGet(meta, field: "__newindex")
        stack.push(newIndex == .function)
        // The base library's rawset, if loaded and still the C original: instances' new fields then
        // never cross into Swift.
        stack.pushGlobalTable()
        if stack.rawGet(-1, field: "rawset") == .function, stack.isCFunction(-1) {
            stack.remove(at: -2)
        } else {
            stack.pop(2)
            stack.pushNil()
        }
        try stack.callBlock(arguments: 8, results: 0, handler: handler)
        stack.pushCopy(of: meta)
        stack.pushCopy(of: info)
        stack.rawSet(classes)
        stack.pushCopy(of: info)
        return stack.top
    }
}
