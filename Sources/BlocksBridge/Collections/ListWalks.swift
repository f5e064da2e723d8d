/// The Lua walks of the hot helpers over lists (`ListWalks.lua`), loaded once per state on first
/// use: `bk.select`, `bk.reject` and `bk.reduce` check their arguments and lay out their result
/// in Swift, then continue into a walk (`LuaBlock.continueWithListWalk`) once their Swift frame is
/// gone. Measured against Penlight's plain Lua loops (1e6 elements), a Lua->Lua call per element
/// beats the C walk's C->Lua call (`Walk.c`), which stays for dictionaries, lists with a foreign
/// metatable (read raw) and states where the chunk cannot load.
enum ListWalks {
    static let registryKey = "bk.listwalks"

    /// Pushes the walk `name`; false (nothing pushed) when the chunk could not be loaded.
    static func push(_ name: String, on stack: LuaStack) -> Bool {
        if stack.rawGet(LuaStack.registryIndex, field: registryKey) != .table {
            stack.pop()
            do throws(EmbeddedChunkFailure) {
                // No message handler: its error only means the helper takes the C walk.
                try stack.runEmbeddedChunk(PackageResources.ListWalks_lua, name: "=bk/ListWalks.lua", results: 1,
                                           handler: 0) { 0 }
            } catch {
                if case .raised = error { stack.pop() }
                return false
            }
            guard stack.type(at: -1) == .table else {
                stack.pop()
                return false
            }
            // A finalizer run while it loaded may have loaded it too: either table is the same code.
            stack.pushCopy(of: -1)
            stack.rawSet(LuaStack.registryIndex, field: registryKey)
        }
        guard stack.rawGet(-1, field: name) == .function else {
            stack.pop(2)
            return false
        }
        stack.remove(at: -2)
        return true
    }
}

extension LuaBlock {
    /// Continues into the Lua walk `name` (`ListWalks.lua`) over the list at `collection`, called
    /// as `walk(list, border, block, values at slots...)` once this Swift frame is gone: returns the
    /// trampoline's status, or nil when the helper takes the C walk instead (a dictionary, a list
    /// with a foreign metatable, whose reads must stay raw, or a state where the walks cannot load).
    func continueWithListWalk(_ name: String, over collection: LuaCollection, slots: Int32...) -> Int32? {
        guard collection.kind.isList, !stack.hasForeignMetatable(collection.table),
              ListWalks.push(name, on: stack) else { return nil }
        stack.pushCopy(of: collection.table)
        stack.push(stack.rawLength(collection.table))
        stack.pushCopy(of: function)
        for slot in slots { stack.pushCopy(of: slot) }
        return stack.continueWithCall(arguments: 3 + Int32(slots.count))
    }
}
