/// Dynamic delegate properties for bridged Swift classes, as `bk.XMLParser`'s `delegate`:
///
/// ```swift
/// static let luaClass = LuaClass(name: "app.Downloader", properties: [
///     .dynamicDelegate(protocol: "DownloaderDelegate"),
/// ])
/// // once per state (a library's setUp): the protocol, and `bk.dynamicDelegate(obj)` for the class
/// DelegateProtocol(name: "DownloaderDelegate", methods: [...]).register(in: stack)
/// LuaClass.registerDelegateProtocol("DownloaderDelegate", for: Downloader.luaClass, in: stack)
/// ```
/// Reading the property gives the object's dynamic delegate; assigning makes the value its real
/// delegate. The Swift side calls it through a `DelegateForwarder`.
extension LuaProperty {
    public static func dynamicDelegate(_ name: String = "delegate", protocol protocolName: String) -> LuaProperty {
        .readWrite(name, get: { (_: AnyObject, stack) throws(LuaRaise) in
            try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: try registered(protocolName, stack))
        }, set: { (_: AnyObject, stack, value) throws(LuaRaise) in
            try DynamicDelegateStore.pushDelegate(stack, object: 1, protocol: try registered(protocolName, stack))
            let delegate = stack.top
            _ = stack.pushMetatable(of: delegate)
            try DynamicDelegateStore.setRealDelegate(stack, delegate: delegate, meta: stack.top, value: value)
        })
    }

    private static func registered(_ name: String, _ stack: LuaStack) throws(LuaRaise) -> DelegateProtocol {
        guard let proto = DelegateProtocol.named(name, in: stack) else {
            throw .message("protocol '\(name)' is not registered")
        }
        return proto
    }
}

extension LuaClass {
    /// Makes `protocolName` the protocol of `property` for instances of `cls`, so
    /// `bk.dynamicDelegate(obj)` (property "delegate") and `bk.dynamicDataSource(obj)`
    /// ("dataSource") find it.
    public static func registerDelegateProtocol(_ protocolName: String, for cls: LuaClass,
                                                property: String = "delegate", in stack: LuaStack) {
        stack.withRestoredTop {
            let classes = DynamicDelegateStore.pushStoreTable(stack, "classes", weakKeys: true)
            stack.pushMetatable(for: cls)
            let meta = stack.top
            stack.pushCopy(of: meta)
            if stack.rawGet(classes) != .table {
                stack.pop()
                stack.pushNewTable(recordCount: 1)
                stack.pushCopy(of: meta)
                stack.pushCopy(of: -2)
                stack.rawSet(classes)
            }
            let info = stack.top
            if stack.rawGet(info, field: "protocols") != .table {
                stack.pop()
                stack.pushNewTable(recordCount: 1)
                stack.pushCopy(of: -1)
                stack.rawSet(info, field: "protocols")
            }
            stack.push(protocolName)
            stack.rawSet(-2, field: property)
        }
    }
}
