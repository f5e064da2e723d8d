import CLua
import CLuaShim

/// Copies between two states (`Transfer.c`): worker arguments and results, channel messages, the
/// pool's chunks. The caller holds both states (their locks).
extension LuaStack {
    /// The stack of a raw `lua_State *` of a bridge state (one that allocates through `bk_alloc`),
    /// for C callbacks that get only `L`; nil for any other state.
    init?(bridgeState L: OpaquePointer) {
        guard let runtime = bk_runtime_of(L) else { return nil }
        self.init(L, runtime)
    }

    /// Why the value at `index` cannot cross to another state, or nil when it can. `strict`: a Lua
    /// function must also capture no table of its own (the rule for running blocks on the pool).
    func transferProblem(at index: Int32, what: String, strict: Bool = false) -> String? {
        bk_transfer_check(L, index, what, strict ? 1 : 0) == LUA_OK ? nil : popTransferProblem()
    }

    /// The same, for an answer the script asked for (`bk.canParallelize`, `bk.isTransferable`): a
    /// memory error of the check (its own tables, near a memory limit) is raised, as a memory error
    /// anywhere else is; it says nothing about the value.
    func answeredTransferProblem(at index: Int32, what: String, strict: Bool = false) throws(LuaRaise) -> String? {
        let status = bk_transfer_check(L, index, what, strict ? 1 : 0)
        if status == LUA_OK { return nil }
        if status == LUA_ERRMEM { throw .valueOnTop }
        return popTransferProblem()
    }

    /// Why the value at `index` cannot cross to another state, worded as a bad argument's reason
    /// (`a coroutine cannot cross to another state`, `field 'x' of the value is a FILE*, which
    /// cannot cross to another state`), or nil when it can.
    func crossingProblem(at index: Int32, what: String = "the value") -> String? {
        bk_transfer_check(L, index, what, BK_TRANSFER_AS_ARGUMENT) == LUA_OK ? nil : popTransferProblem()
    }

    /// The reason a failed check left on top, popped.
    private func popTransferProblem() -> String {
        let message = toString(-1) ?? "cannot be copied"
        pop()
        return message
    }

    /// Copies `count` values from `first` onto `target` (both states held by the caller). On
    /// failure the error value is on `target`'s top and false is returned.
    func copy(_ first: Int32, count: Int32, to target: LuaStack, what: String, numbered: Int32 = 0) -> Bool {
        bk_transfer_copy(L, first, count, target.L, what, numbered) == LUA_OK
    }

    /// Copies elements `first ... first + count - 1` of the list at `table` into positions
    /// `offset + 1 ...` of the table at `into` of `target` (`into` 0: a new list pushed on
    /// `target`). On failure one error value is on `target`'s top and false is returned.
    func copyRange(of table: Int32, first: Int64, count: Int64, to target: LuaStack, into: Int32 = 0,
                   offset: Int64 = 0, what: String) -> Bool {
        bk_transfer_copy_range(L, table, first, count, target.L, into, offset, what) == LUA_OK
    }

    /// Moves the error value on top of `source` into a Lua error of this stack: copied when it can
    /// be, else its description. Throws `.valueOnTop` (pops the source's value).
    func raiseCopiedError(from source: LuaStack, what: String) -> LuaRaise {
        // Either the copy or, when it cannot be copied, the copier's message naming why.
        _ = source.copy(-1, count: 1, to: self, what: what)
        source.pop()
        return .valueOnTop
    }
}
