import CLua
import CLuaShim

/// A bridged class whose instances may cross between Lua states (worker arguments and results,
/// channel messages): the other state gets the same Swift object. Its methods then run on several
/// threads at once, hence `Sendable`.
public protocol LuaShareable: LuaBridged, Sendable {}

/// Called by the C copier (Transfer.c) with no allocation: reads the userdata's tag and object.
@_cdecl("bk_transfer_is_shareable")
func transferIsShareable(_ L: OpaquePointer?, _ index: Int32) -> Int32 {
    guard let L, let runtime = bk_runtime_of(L) else { return 0 }
    return LuaStack(L, runtime).bridgedObject(at: index) is any LuaShareable ? 1 : 0
}

/// Called by the C copier with the target's swift_depth raised (the push must not fail).
@_cdecl("bk_transfer_push_shared")
func transferPushShared(_ from: OpaquePointer?, _ index: Int32, _ to: OpaquePointer?) -> Int32 {
    guard let from, let to, let source = bk_runtime_of(from), let target = bk_runtime_of(to),
          let object = LuaStack(from, source).bridgedObject(at: index) as? any LuaShareable else { return 0 }
    LuaStack(to, target).pushShared(object)
    return 1
}

extension LuaStack {
    fileprivate func pushShared<T: LuaShareable>(_ object: T) { push(object: object) }

    /// Why the value at `index` cannot cross to another state, or nil when it can. `strict`: a Lua
    /// function must also capture no table of its own (the rule for running blocks on the pool).
    func transferProblem(at index: Int32, what: String, strict: Bool = false) -> String? {
        let status = bk_transfer_check(L, index, what, strict ? 1 : 0)
        if status == LUA_OK { return nil }
        let message = toString(-1) ?? "cannot be copied"
        pop()
        return message
    }

    /// Copies `count` values from `first` onto `target` (both states held by the caller). On
    /// failure the error value is on `target`'s top and false is returned.
    func copy(_ first: Int32, count: Int32, to target: LuaStack, what: String, numbered: Int32 = 0) -> Bool {
        bk_transfer_copy(L, first, count, target.L, what, numbered) == LUA_OK
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

/// A value that crosses to a worker thread without checks: a Lua state owned by one thread at a
/// time (its lock and the hand-over through Dispatch or a condition keep that true).
struct HandedOver<T>: @unchecked Sendable {
    let value: T
}
