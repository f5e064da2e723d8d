
/// `bk.null`: one unique value per state standing for "no value" where nil cannot be stored (a map
/// result that is nil keeps its position as `bk.null`). `tostring(bk.null)` is `"null"`.
extension LuaStack {
    static let nullKey = "bk.null"

    /// Pushes the state's `bk.null`.
    public func pushNull() {
        rawGet(LuaStack.registryIndex, field: Self.nullKey)
    }

    /// True when the value at `index` is `bk.null`.
    public func isNull(_ index: Int32) -> Bool {
        guard type(at: index) == .userdata else { return false }
        let index = absolute(index)
        pushNull()
        let same = rawEqual(index, -1)
        pop()
        return same
    }

    /// Creates `bk.null` (an empty userdata with a `__tostring` of "null") in the registry.
    func makeNullSentinel() {
        pushNewUserdata(size: 0)
        pushNewTable(recordCount: 3)
        push("bk.null")
        rawSet(-2, field: "__name")
        push(function: "__tostring") { stack in
            stack.push("null")
            return 1
        }
        rawSet(-2, field: "__tostring")
        push(false)
        rawSet(-2, field: "__metatable")
        setMetatable(of: -2)
        rawSet(LuaStack.registryIndex, field: Self.nullKey)
    }
}
