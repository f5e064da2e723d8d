/// Method calls on bridged objects that also have properties go through a Swift `__index`
/// (a property lookup by Swift string first). For the objects scripts call methods on in hot loops
/// (`handle:cancel()`), a class says `methodsFirst`, and a small Lua `__index` looks the method
/// table up first, inside the VM, and hands only other keys (the properties) to the Swift one. It is
/// made with the class's metatable, on first use, not at start-up.
extension LuaStack {
    /// Replaces the Swift `__index` of the metatable at `meta` (which has `methods`) with the Lua one.
    func lookUpMethodsFirst(meta: Int32, className: String) {
        withRestoredTop {
            guard rawGet(meta, field: "methods") == .table, rawGet(meta, field: "__index") == .function else { return }
            do {
                try load("""
                    local methods, index = ...
                    return function(self, key)
                      local method = methods[key]
                      if method ~= nil then return method end
                      return index(self, key)
                    end
                    """, name: "=[bk " + className + " __index]")
                insert(at: meta + 1)
                try call(arguments: 2, results: 1)
                rawSet(meta, field: "__index")
            } catch {
                // Keep the Swift __index: slower, same behaviour.
            }
        }
    }
}
