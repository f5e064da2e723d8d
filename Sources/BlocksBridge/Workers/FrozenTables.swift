/// `bk.freeze`, `bk.isFrozen` and `bk.canParallelize`: read-only tables that blocks on the pool may
/// capture, and the pool's rule asked directly.
///
/// A frozen table is a view (`Frozen.c`, `LuaStack+Frozen.swift`): it cannot change, so a block
/// capturing it loses nothing when copied, and a pool state keeps its copy for the next calls.
extension BKLibrary {
    static let frozenTableFunctions: [BKFunction] = [
        // freeze(t) -> the deep read-only view of t (the same view for the same t)
        BKFunction("freeze") { stack throws(LuaRaise) in
            try stack.checkTable(1)
            stack.top = 1
            try stack.pushFrozenView(ofArgument: 1)
            return 1
        },
        // isFrozen(v) -> true when v is a frozen view
        BKFunction("isFrozen") { stack throws(LuaRaise) in
            try stack.checkAny(1)
            stack.push(stack.isFrozenView(1))
            return 1
        },
        // canParallelize(f) -> true, or false and why apply / parallelMap would run f in the caller
        BKFunction("canParallelize") { stack throws(LuaRaise) in
            try stack.checkFunction(1)
            if let problem = try stack.answeredTransferProblem(at: 1, what: "the block", strict: true) {
                stack.push(false)
                stack.push(problem)
                return 2
            }
            stack.push(true)
            return 1
        },
    ]
}

extension LuaStack {
    /// Refuses a frozen view as the collection argument of a helper that changes it.
    func checkNotFrozen(_ index: Int32) throws(LuaRaise) {
        if isFrozenView(index) { throw .argument(index, "the table is frozen and cannot be changed") }
    }
}
