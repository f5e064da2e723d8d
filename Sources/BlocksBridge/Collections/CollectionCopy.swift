
extension LuaStack {
    /// Pushes a shallow copy of the table at `index`: same fields (raw), same metatable. A set or
    /// ordered set gets a membership table of its own, so the copy and the original stay independent.
    public func pushShallowCopy(of index: Int32) {
        let index = absolute(index)
        pushNewTable(arrayCount: Int32(clamping: rawLength(index)))
        let copy = top
        pushNil()
        while next(index) {
            pushCopy(of: -2)
            insert(at: -2)
            rawSet(copy)
        }
        guard pushMetatable(of: index) else { return }
        let kind = rawGet(-1, field: Self.kindField) == .number ? toInteger(-1).flatMap { CollectionKind(rawValue: Int($0)) } : nil
        pop()
        if let kind, kind.hasMembership {
            pop()
            markSet(copy, kind: kind)
            pushMembers(of: copy)
            let members = top
            let count = listCount(copy)
            var position: Int64 = 1
            while position <= count {
                rawGet(copy, position)
                if !isNaN(-1) {
                    push(true)
                    rawSet(members)
                } else {
                    pop()
                }
                position += 1
            }
            pop()
        } else {
            setMetatable(of: copy)
        }
    }
}
