extension BKLibrary {
    /// Functions about the module itself.
    public static let core = BKLibrary(name: "Core", functions: [
        // installGlobals([env]): bk and bk_NAME into env (default: the globals); returns env.
        BKFunction("installGlobals") { stack throws(LuaRaise) in
            if stack.isNoneOrNil(1) {
                BKModule.installGlobals(in: stack)
                stack.pushGlobalTable()
            } else {
                try stack.checkTable(1)
                BKModule.installGlobals(in: stack, target: 1)
                stack.pushCopy(of: 1)
            }
            return 1
        },
        BKFunction("version") { stack in
            stack.push(BKModule.version)
            return 1
        },
    ])
}

extension BKModule {
    public static let version = "0.1.0"
}
