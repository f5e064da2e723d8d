
extension BKLibrary {
    /// NSObject+BKAssociatedObjects for Lua tables, userdata, functions and coroutines.
    /// A Lua state runs one thread at a time, so the `atomically` variants are the plain ones.
    public static let associatedObjects = BKLibrary(name: "AssociatedObjects", functions: [
        BKFunction("associateValue") { stack throws(LuaRaise) in try associate(stack, .strong) },
        BKFunction("atomicallyAssociateValue") { stack throws(LuaRaise) in try associate(stack, .strong) },
        BKFunction("associateCopyOfValue") { stack throws(LuaRaise) in try associate(stack, .copy) },
        BKFunction("atomicallyAssociateCopyOfValue") { stack throws(LuaRaise) in try associate(stack, .copy) },
        BKFunction("weaklyAssociateValue") { stack throws(LuaRaise) in try associate(stack, .weak) },
        BKFunction("associatedValueForKey") { stack throws(LuaRaise) in
            try stack.checkAssociationTarget(1)
            try stack.checkAssociationKey(2)
            stack.top = 2
            guard stack.pushAssociationTable(of: 1, create: false) else { return 1 }
            stack.pushCopy(of: 2)
            stack.rawGet(-2)
            stack.unboxWeakValue()
            return 1
        },
        BKFunction("removeAllAssociatedObjects") { stack throws(LuaRaise) in
            try stack.checkAssociationTarget(1)
            stack.top = 1
            stack.pushAssociations()
            stack.pushCopy(of: 1)
            stack.pushNil()
            stack.rawSet(-3)
            return 0
        },
    ])

    /// associate*(obj, key, value): value may be nil (removes the association).
    private static func associate(_ stack: LuaStack, _ policy: LuaStack.AssociationPolicy) throws(LuaRaise) -> Int32 {
        try stack.checkAssociationTarget(1)
        try stack.checkAssociationKey(2)
        stack.top = 3
        stack.associate(object: 1, key: 2, value: 3, policy: policy)
        return 0
    }
}
