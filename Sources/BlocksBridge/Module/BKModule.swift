import CLua
import CLuaShim

/// The `bk` module: every library's functions in one table, loadable with `require "bk"`.
public enum BKModule {
    /// Registry key of the module table of a state.
    static let registryKey = "bk.module"

    /// Every exported name, in library order.
    public static var exportedNames: [String] {
        libraries.flatMap { $0.functions.map(\.name) + $0.luaFunctionNames }
    }

    /// Builds the module table and makes it `package.loaded.bk` (so `require "bk"` returns it).
    static func register(in stack: LuaStack) {
        let count = libraries.reduce(0) { $0 + $1.functions.count + $1.luaFunctionNames.count }
        stack.pushNewTable(recordCount: Int32(count))
        let module = stack.top
        for library in libraries {
            for function in library.functions {
                stack.push(function: function.name, function.body)
                stack.rawSet(module, field: function.name)
            }
        }
        for library in libraries {
            library.setUp?(stack, module)
        }
        stack.pushCopy(of: module)
        stack.rawSet(LuaStack.registryIndex, field: registryKey)
        stack.pushRegistryTable(LUA_LOADED_TABLE)
        stack.pushCopy(of: module)
        stack.rawSet(-2, field: "bk")
        stack.top = module - 1
    }

    /// Pushes the module table of the state.
    public static func pushModule(on stack: LuaStack) {
        stack.rawGet(LuaStack.registryIndex, field: registryKey)
    }

    /// Sets `bk` and `bk_NAME` for every function of the module table (raw sets) in the table at
    /// `target`, or in the globals when `target` is nil.
    static func installGlobals(in stack: LuaStack, target: Int32? = nil) {
        stack.withRestoredTop {
            if let target { stack.pushCopy(of: target) } else { stack.pushGlobalTable() }
            let globals = stack.top
            pushModule(on: stack)
            let module = stack.top
            guard stack.type(at: module) == .table else { return }
            stack.installGlobals(in: globals, module: module)
        }
    }
}
