/// The body of a function of the `bk` module. Sendable: the libraries are shared by every state.
public typealias BKFunctionBody = @Sendable (LuaStack) throws(LuaRaise) -> Int32

/// One exported function: `bk.NAME`, also the global `bk_NAME` after `installGlobals`.
public struct BKFunction: Sendable {
    public let name: String
    public let body: BKFunctionBody

    public init(_ name: String, _ body: @escaping BKFunctionBody) {
        self.name = name
        self.body = body
    }
}

/// A family of helpers (one BlocksKit category): its functions and per-state set-up.
public struct BKLibrary: Sendable {
    public let name: String
    public let functions: [BKFunction]
    /// Functions the library writes in Lua and puts into the module in `setUp` (named for
    /// `--help` and `exportedNames`).
    public let luaFunctionNames: [String]
    /// Runs once per state after every library's functions are in the module table, which is at
    /// `module` on the stack (metatables, per-state objects, constants such as `bk.null`).
    public let setUp: (@Sendable (LuaStack, _ module: Int32) -> Void)?

    public init(name: String, functions: [BKFunction], luaFunctionNames: [String] = [],
                setUp: (@Sendable (LuaStack, _ module: Int32) -> Void)? = nil) {
        self.name = name
        self.functions = functions
        self.luaFunctionNames = luaFunctionNames
        self.setUp = setUp
    }
}
