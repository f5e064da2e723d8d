import CLua

extension BKLibrary {
    /// The collection toolbox beyond BlocksKit (what Penlight, Swift and lodash users reach for):
    /// sorted, groupBy, sum, union, ... on every collection kind.
    ///
    /// The helpers are Lua (`Toolbox*.lua`), so that their blocks are called Lua->Lua: a block may
    /// yield (suspend its task) and its error reaches the caller unchanged with no protected call
    /// per element. The module is built before the standard libraries are open (bklua, sandboxes),
    /// so each `bk.NAME` (and each kind's `c:NAME` / `c:bk_NAME`) starts as a small Lua stub that
    /// loads the toolbox on first use and then calls straight through to it, as the tasks do.
    public static let collectionToolbox = BKLibrary(name: "Collection toolbox", functions: [],
                                                    luaFunctionNames: CollectionToolbox.names,
                                                    setUp: { stack, module in
        CollectionToolbox.installStubs(on: stack, module: module)
    })
}

/// Loads the toolbox's Lua once per state, on first use.
enum CollectionToolbox {
    static let names = [
        "sorted", "sortedBy", "reversed",
        "groupBy", "countBy", "partition", "uniq",
        "keys", "values", "zip", "flatten", "flatMap", "compactMap", "slice", "take", "drop",
        "takeWhile", "dropWhile", "chunked", "first", "last", "indexOf",
        "sum", "min", "max", "count",
        "union", "intersection", "difference", "symmetricDifference", "isSubset", "isSuperset", "isDisjoint",
    ]

    /// Registry key of the loaded toolbox's table of functions.
    static let registryKey = "bk.toolbox"
    /// Registry key of the number of loads of it in progress (nested: see `pushFunctions`).
    static let loadingKey = "bk.toolbox.loading"

    /// The chunks after `ToolboxCommon.lua`, each called with (globals, common) and returning a
    /// table of helpers.
    static let chunks: [(bytes: [UInt8], name: String)] = [
        (PackageResources.ToolboxSorting_lua, "=bk/ToolboxSorting.lua"),
        (PackageResources.ToolboxGrouping_lua, "=bk/ToolboxGrouping.lua"),
        (PackageResources.ToolboxSequences_lua, "=bk/ToolboxSequences.lua"),
        (PackageResources.ToolboxAggregates_lua, "=bk/ToolboxAggregates.lua"),
        (PackageResources.ToolboxSetAlgebra_lua, "=bk/ToolboxSetAlgebra.lua"),
    ]

    /// Each stub asks the loader once, then calls the helper (a tail call: the helper's errors
    /// name the script's line, and a block may yield). The same stub is `bk.NAME` and the kinds'
    /// `NAME` / `bk_NAME`, so `help(c.sorted)` finds it. No standard library: it runs at start-up.
    static let stubs = """
        local module, methods, prefixed, load, names = ...
        for i = 1, #names do
          local name, real = names[i], nil
          local function stub(...)
            if real == nil then real = load()[name] end
            return real(...)
          end
          module[name] = stub
          for j = 1, #methods do
            methods[j][name] = stub
            methods[j]["bk_" .. name] = stub
          end
          for j = 1, #prefixed do prefixed[j]["bk_" .. name] = stub end
        end
        """

    static func installStubs(on stack: LuaStack, module: Int32) {
        stack.withRestoredTop {
            let handler = stack.pushMessageHandler()
            do throws(LuaError) {
                try stack.load(stubs, name: "=bk/toolbox")
            } catch {
                StandardStreams.writeError("bk: \(error.message)\n")
                return
            }
            stack.pushCopy(of: module)
            pushMethodTables(on: stack, ofLists: true)
            pushMethodTables(on: stack, ofLists: false)
            stack.push(function: "toolbox") { stack throws(LuaRaise) in
                try pushFunctions(on: stack)
                return 1
            }
            stack.pushNewTable(arrayCount: Int32(names.count))
            for (i, name) in names.enumerated() {
                stack.push(name)
                stack.rawSet(-2, Int64(i + 1))
            }
            if stack.protectedCall(arguments: 5, results: 0, handler: handler) != LUA_OK {
                StandardStreams.writeError("bk: toolbox: \(stack.toString(-1) ?? "?")\n")
            }
        }
    }

    /// Pushes a list of the method tables (their metatables' `__index` tables, each once) of the
    /// list kinds, which answer `NAME` and `bk_NAME`, or of dictionaries, which answer only the
    /// `bk_` names (a dictionary's other keys are its own).
    private static func pushMethodTables(on stack: LuaStack, ofLists lists: Bool) {
        stack.pushNewTable()
        let list = stack.top
        var count: Int64 = 0
        for kind in CollectionKind.allCases where kind.isList == lists {
            guard stack.rawGet(LuaStack.registryIndex, field: kind.metatableKey) == .table else {
                stack.pop()
                continue
            }
            if stack.rawGet(-1, field: "__index") == .table {
                var seen = false
                var i: Int64 = 1
                while i <= count, !seen {
                    stack.rawGet(list, i)
                    seen = stack.rawEqual(-1, -2)
                    stack.pop()
                    i += 1
                }
                if !seen {
                    count += 1
                    stack.pushCopy(of: -1)
                    stack.rawSet(list, count)
                }
            }
            stack.pop(2)
        }
    }

    /// Pushes the toolbox's table of functions, loading it on first use (the base, string, math
    /// and table libraries must be open by then).
    ///
    /// Loading allocates, so finalizers may run meanwhile and call a helper: their stub loads the
    /// toolbox again, nested (Lua runs no collector step inside a finalizer, so this nests once),
    /// and the outer load then replaces the registry's table by its own, the same code. A load
    /// nested deeper was called back by the loading itself (a global the chunks read, replaced by
    /// a script function that calls a helper): it is refused, rather than compiling the toolbox
    /// again at every level down to the trampoline's nesting limit.
    static func pushFunctions(on stack: LuaStack) throws(LuaRaise) {
        if stack.rawGet(LuaStack.registryIndex, field: registryKey) == .table { return }
        stack.pop()
        stack.rawGet(LuaStack.registryIndex, field: loadingKey)
        let loading = stack.toInteger(-1) ?? 0
        stack.pop()
        if loading >= 2 { throw .message("toolbox: called again while it loads (by a function its loading called)") }
        stack.push(loading + 1)
        stack.rawSet(LuaStack.registryIndex, field: loadingKey)
        defer {
            stack.push(loading)
            stack.rawSet(LuaStack.registryIndex, field: loadingKey)
        }
        let base = stack.top
        let handler = stack.pushMessageHandler()
        // ToolboxCommon.lua(globals, bk, natives) -> common
        try run(PackageResources.ToolboxCommon_lua, "=bk/ToolboxCommon.lua", on: stack, handler: handler) {
            stack.pushGlobalTable()
            BKModule.pushModule(on: stack)
            ToolboxNatives.push(on: stack)
            return 3
        }
        let common = stack.top
        stack.pushNewTable(recordCount: Int32(names.count))
        let functions = stack.top
        for chunk in chunks {
            // Each chunk(globals, common) -> its table of helpers.
            try run(chunk.bytes, chunk.name, on: stack, handler: handler) {
                stack.pushGlobalTable()
                stack.pushCopy(of: common)
                return 2
            }
            stack.pushNil()
            while stack.next(-2) {
                stack.pushCopy(of: -2)
                stack.insert(at: -2)
                stack.rawSet(functions)
            }
            stack.pop()
        }
        stack.pushCopy(of: functions)
        stack.rawSet(LuaStack.registryIndex, field: registryKey)
        stack.pushCopy(of: functions)
        stack.replace(at: base + 1)
        stack.top = base + 1
    }

    /// Runs one of the toolbox's chunks, which must return a table (left on top).
    private static func run(_ bytes: [UInt8], _ name: String, on stack: LuaStack, handler: Int32,
                            pushArguments: () -> Int32) throws(LuaRaise) {
        do throws(EmbeddedChunkFailure) {
            try stack.runEmbeddedChunk(bytes, name: name, results: 1, handler: handler, pushArguments: pushArguments)
        } catch {
            if case .load(let error) = error { throw .message("toolbox: \(error.message)") }
            throw .message("toolbox: \(stack.toString(-1) ?? "?")")
        }
        guard stack.type(at: -1) == .table else { throw .message("toolbox: \(stack.toString(-1) ?? "?")") }
    }
}
