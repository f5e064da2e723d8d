/// Method calls on bridged objects that also have properties go through a Swift `__index`
/// (a property lookup by Swift string first). For the objects scripts call methods on in hot loops
/// (`handle:cancel()`), a small Lua `__index` looks the method table up first, inside the VM, and
/// hands only other keys (the properties) to the Swift one.
extension LuaStack {
    func lookUpMethodsFirst(for cls: LuaClass) {
        let base = top
        defer { top = base }
        pushMetatable(for: cls)
        let meta = top
        guard rawGet(meta, field: "methods") == .table, rawGet(meta, field: "__index") == .function else { return }
        do {
            try load("""
                local methods, index = ...
                return function(self, key)
                  local method = methods[key]
                  if method ~= nil then return method end
                  return index(self, key)
                end
                """, name: "=[bk " + cls.name + " __index]")
            insert(at: meta + 1)
            try call(arguments: 2, results: 1)
            rawSet(meta, field: "__index")
        } catch {
            // Keep the Swift __index: slower, same behaviour.
        }
    }
}
